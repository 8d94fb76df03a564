/**
 * One part of `npm run bench`. `bench/bench.ts` runs the sections one after another on one
 * private redis-server, prints a table and then one `name=value` line per figure, and writes
 * `bench/results/latest.json`. Each section can also be run on its own by its own script.
 */
export interface BenchContext {
  /** A Redis the section may use; sections that must kill or measure Redis alone start their own. */
  redisUrl: string;
  /** `--quick`: a short run to check that the section works, not to quote. */
  quick: boolean;
  /** Progress lines go to stderr, so stdout stays `name=value` lines. */
  log(line: string): void;
}

/** Figures by name (`engine_vs_bullmq_chain_r100`, `recovery_p95_s`, …); booleans as 1/0 (`inflight_10000_ok`). */
export type BenchFigures = Record<string, number>;

export interface BenchSection {
  /** Shown in the table, e.g. "steps", "langgraph", "capacity". */
  name: string;
  run(context: BenchContext): Promise<BenchFigures>;
}
