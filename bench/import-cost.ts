/**
 * `npm run bench:imports -- [--root <checkout>]... [--rounds N]`: what a user's process pays to import
 * the package, cold (a fresh Node process each time, files in the OS cache). Two imports side by side, in
 * turns, several rounds, medians: `import { AgentClient } from 'agentq'` (a producer service) and every
 * entry point in package.json "exports" (the whole package). Imports the built dist/ by name (run `npm
 * run build` first). One extra round of each records the modules loaded (a load hook slows it, so it is
 * not timed). Each `--root` is another built checkout (an older commit, say), measured in the same turns
 * so a change in the machine's load falls on all of them; without one, this checkout alone. Rounds
 * default to 9. Writes bench/results/import-cost-latest.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { entryPoints, moduleOwner, probeImport, type ImportProbe } from '../test/helpers/import-probe.js';
import { repoRoot } from '../test/helpers/node-entry.js';
import { percentile, round } from './lib/stats.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '9' }, root: { type: 'string', multiple: true, default: [] } },
});
const rounds = Number(values.rounds);
const roots = values.root.length === 0 ? [repoRoot] : values.root.map((root) => resolve(root));
const log = (line: string) => process.stderr.write(`${line}\n`);

/** The two imports of one checkout, by figure name (`client`, `whole`, prefixed when several checkouts). */
const probes = new Map<string, ImportProbe>();
for (const root of roots) {
  const prefix = roots.length === 1 ? '' : `${basename(root)}_`;
  const entries = entryPoints(root).map((entry) => entry.specifier);
  log(`${root}: entry points ${entries.join(', ')}`);
  probes.set(`${prefix}client`, { root, imports: [{ specifier: 'agentq', names: ['AgentClient'] }] });
  probes.set(`${prefix}whole`, { root, imports: entries.map((specifier) => ({ specifier, names: [] })) });
}

const times = new Map<string, number[]>([...probes.keys()].map((name) => [name, []]));
for (let turn = 1; turn <= rounds; turn += 1) {
  const line: string[] = [];
  for (const [name, probe] of probes) {
    const { ms } = await probeImport(probe);
    times.get(name)!.push(ms);
    line.push(`${name} ${round(ms, 0)} ms`);
  }
  log(`round ${turn}: ${line.join(', ')}`);
}

const figures: Record<string, number> = {};
for (const [name, probe] of probes) {
  const { files, modules } = await probeImport({ ...probe, recordModules: true });
  const owners = new Set(modules.map((path) => moduleOwner(path, probe.root)));
  figures[`${name}_import_ms_p50`] = round(percentile(times.get(name)!, 50), 0);
  figures[`${name}_import_ms_min`] = round(Math.min(...times.get(name)!), 0);
  figures[`${name}_modules`] = files.length;
  figures[`${name}_packages`] = [...owners].filter((owner) => !owner.startsWith('dist/')).length;
}
for (const [name, value] of Object.entries(figures)) process.stdout.write(`${name}=${value}\n`);
mkdirSync(join(repoRoot, 'bench/results'), { recursive: true });
writeFileSync(
  join(repoRoot, 'bench/results/import-cost-latest.json'),
  `${JSON.stringify({ at: new Date().toISOString(), rounds, roots, figures, times: Object.fromEntries(times) }, null, 2)}\n`,
);
