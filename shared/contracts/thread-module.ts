import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AgentqError } from './errors.js';

/**
 * The file a `worker_threads` thread runs: the module `name` beside the caller (`import.meta.url`),
 * compiled. From dist/ that is `./<name>.js` beside the caller. From the TypeScript sources (vitest,
 * tsx) it is the same module's build under dist/: on Node 20 a thread does not inherit the parent's
 * loader, so it cannot start a `.ts` file itself, and the tests' global setup rebuilds dist/ whenever a
 * source is newer (test/global-setup-dist.ts). Started from dist/, a thread costs no TypeScript loader.
 * Where `npm run build` bundled the module with what it imports (`<name>.bundle.js` beside it,
 * scripts/bundle-worker.ts), the thread runs the bundle: one file to load instead of each of its modules.
 */
export function threadModuleUrl(name: string, callerUrl: string): URL {
  if (!callerUrl.endsWith('.ts')) return bundledOr(new URL(`./${name}.js`, callerUrl));
  const folder = dirname(fileURLToPath(callerUrl));
  let root = folder;
  while (!existsSync(join(root, 'package.json'))) {
    const up = dirname(root);
    if (up === root) break;
    root = up;
  }
  const built = join(root, 'dist', relative(root, folder), `${name}.js`);
  if (!existsSync(built)) {
    throw new AgentqError(
      'INTERNAL',
      `the thread module ${name} runs compiled, and ${built} is missing: run npm run build (threads cannot start TypeScript sources)`,
    );
  }
  return bundledOr(pathToFileURL(built));
}

/** `<module>.bundle.js` beside a built module when the build made one, else the module. */
function bundledOr(module: URL): URL {
  const bundle = new URL(module.href.replace(/\.js$/, '.bundle.js'));
  return bundle.protocol === 'file:' && existsSync(fileURLToPath(bundle)) ? bundle : module;
}
