import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * `npm run build`'s second half: tsc emits only JavaScript, and the Lua scripts are read at run time
 * from beside their modules (shared/redis/lua-script.ts), so each `.lua` file of the built
 * trees is copied to the same place under dist/.
 */
const root = join(dirname(new URL(import.meta.url).pathname), '..');
let copied = 0;
for (const tree of ['shared', 'worker', 'producer']) {
  for (const entry of readdirSync(join(root, tree), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.lua')) continue;
    const source = join(entry.parentPath, entry.name);
    const target = join(root, 'dist', relative(root, source));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(source, target);
    copied += 1;
  }
}
console.log(`copied ${copied} Lua scripts to dist/`);
