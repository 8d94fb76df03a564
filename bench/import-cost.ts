/**
 * `npm run bench:imports`: what a user's process pays to import the package, cold (a fresh Node process
 * each time, files in the OS cache). Two imports side by side, in turns, several rounds, medians:
 * `import { AgentClient } from 'agentq'` (a producer service) and every entry point in package.json
 * "exports" (the whole package). Imports the built dist/ by name (run `npm run build` first). One extra
 * round of each records the modules loaded (a load hook slows it, so it is not timed).
 * `-- --rounds <n>` (default 9). Writes bench/results/import-cost-latest.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { entryPoints, moduleOwner, probeImport, type ImportProbe } from '../test/helpers/import-probe.js';
import { repoRoot } from '../test/helpers/node-entry.js';
import { percentile, round } from './lib/stats.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '9' } } });
const rounds = Number(values.rounds);

const entries = entryPoints().map((entry) => entry.specifier);

const probes: Record<string, ImportProbe> = {
  client: { imports: [{ specifier: 'agentq', names: ['AgentClient'] }] },
  whole: { imports: entries.map((specifier) => ({ specifier, names: [] })) },
};

const log = (line: string) => process.stderr.write(`${line}\n`);
log(`entry points: ${entries.join(', ')}; ${rounds} rounds`);

const times: Record<string, number[]> = { client: [], whole: [] };
for (let round_ = 0; round_ < rounds; round_ += 1) {
  // In turns, so a change in the machine's load falls on both.
  for (const [name, probe] of Object.entries(probes)) times[name]!.push((await probeImport(probe)).ms);
  log(`round ${round_ + 1}: client ${round(times.client!.at(-1)!, 0)} ms, whole ${round(times.whole!.at(-1)!, 0)} ms`);
}

const figures: Record<string, number> = { entry_points: entries.length };
for (const [name, probe] of Object.entries(probes)) {
  const { modules } = await probeImport({ ...probe, recordModules: true });
  figures[`${name}_import_ms_p50`] = round(percentile(times[name]!, 50), 0);
  figures[`${name}_import_ms_min`] = round(Math.min(...times[name]!), 0);
  figures[`${name}_modules`] = modules.length;
  figures[`${name}_packages`] = new Set(modules.map(moduleOwner).filter((owner) => !owner.startsWith('dist/'))).size;
}
for (const [name, value] of Object.entries(figures)) process.stdout.write(`${name}=${value}\n`);
mkdirSync(join(repoRoot, 'bench/results'), { recursive: true });
writeFileSync(
  join(repoRoot, 'bench/results/import-cost-latest.json'),
  `${JSON.stringify({ at: new Date().toISOString(), rounds, entryPoints: entries, figures, times }, null, 2)}\n`,
);
