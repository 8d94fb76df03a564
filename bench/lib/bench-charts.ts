/**
 * The charts of docs/benchmarks.md and docs/evaluation.md, drawn from the benchmarks' own results:
 * the `figures` of bench/results/latest.json (or steps-latest.json, …) and the `--json` files of
 * `npm run eval`. A chart whose figures a results file lacks is left out, so a partial run (`--only
 * steps`) redraws only its own charts.
 */
import { renderBarChart, type BarChart } from './bar-chart.js';

/** One file of `npm run bench` / `bench:<section>` results, or the recorded figures the docs show. */
export interface BenchResults {
  /** How the figures were measured (the command, machine and date), printed under each chart's title. */
  measuredWith?: string;
  figures: Record<string, number>;
}

/** One `npm run eval -- --json` file. */
export interface EvalResults {
  set: string;
  retrieval: string;
  command?: string;
  figures: Record<string, number>;
}

export interface Chart {
  /** File name under the charts folder, e.g. `steps-per-second.svg`. */
  file: string;
  svg: string;
}

type Figures = Record<string, number>;

function has(figures: Figures, ...names: string[]): boolean {
  return names.every((name) => typeof figures[name] === 'number');
}

function benchCharts({ figures, measuredWith = 'npm run bench' }: BenchResults): { file: string; chart: BarChart }[] {
  const charts: { file: string; chart: BarChart }[] = [];
  if (has(figures, 'engine_steps_per_s_r100', 'bullmq_chain_steps_per_s_r100')) {
    charts.push({
      file: 'steps-per-second.svg',
      chart: {
        title: 'Steps per second: the chain graph vs a plain BullMQ job chain (one worker process)',
        subtitle: `steps section: ${measuredWith}`,
        unit: 'steps/s',
        series: ['agentq engine (chain graph)', 'plain BullMQ chain (no state)', 'agentq, every other node inline'],
        groups: [1, 10, 100].map((inFlight) => ({
          label: `${inFlight} run${inFlight === 1 ? '' : 's'} in flight`,
          values: [
            figures[`engine_steps_per_s_r${inFlight}`],
            figures[`bullmq_chain_steps_per_s_r${inFlight}`],
            figures[`engine_inline_steps_per_s_r${inFlight}`],
          ],
        })),
      },
    });
  }
  if (has(figures, 'engine_cpu_us_per_step', 'bullmq_chain_cpu_us_per_step')) {
    const parts = ['worker', 'redis', 'producer'] as const;
    charts.push({
      file: 'cpu-per-step.svg',
      chart: {
        title: 'CPU per step at 100 runs in flight (lower is better)',
        subtitle: `steps section, medians of alternating rounds: ${measuredWith}`,
        unit: 'µs',
        series: ['agentq engine (chain graph)', 'plain BullMQ chain (no state)'],
        groups: [
          ...parts.map((part) => ({
            label: part === 'redis' ? 'Redis' : part,
            values: [figures[`engine_cpu_us_per_step_${part}`], figures[`bullmq_chain_cpu_us_per_step_${part}`]],
          })),
          { label: 'total', values: [figures.engine_cpu_us_per_step, figures.bullmq_chain_cpu_us_per_step] },
        ],
        marker: { value: 300, label: 'goal ≤ 300 µs' },
      },
    });
  }
  if (has(figures, 'engine_model_steps_per_s_r1_0ms', 'langgraph_sqlite_steps_per_s_r1_0ms')) {
    charts.push({
      file: 'model-steps-vs-langgraph.svg',
      chart: {
        title: 'Model-calling steps per second: agentq vs LangGraph.js with SqliteSaver (0 ms model)',
        subtitle: `steps and langgraph sections: ${measuredWith}`,
        unit: 'steps/s',
        series: ['agentq (queue, 2 processes, crash recovery)', 'LangGraph.js + SQLite (one process)'],
        groups: [1, 10, 100].map((inFlight) => ({
          label: `${inFlight} run${inFlight === 1 ? '' : 's'} in flight`,
          values: [
            figures[`engine_model_steps_per_s_r${inFlight}_0ms`],
            figures[`langgraph_sqlite_steps_per_s_r${inFlight}_0ms`],
          ],
        })),
      },
    });
  }
  if (has(figures, 'agentq_model0_steps_per_s_r100')) charts.push(...peersCharts(figures, measuredWith));
  if (has(figures, 'redis_bytes_per_inflight_run', 'redis_bytes_per_finished_run')) {
    charts.push({
      file: 'capacity-redis-bytes.svg',
      chart: {
        title: 'Redis memory per run, 10,000 runs parked on a model call on 2 workers',
        subtitle: `capacity section: ${measuredWith}`,
        unit: 'bytes',
        series: ['Redis bytes per run'],
        groups: [
          { label: 'parked (waiting on the model)', values: [figures.redis_bytes_per_inflight_run] },
          { label: 'finished (until it expires)', values: [figures.redis_bytes_per_finished_run] },
        ],
        marker: { value: 5120, label: 'goal ≤ 5 KiB' },
      },
    });
  }
  if (has(figures, 'recovery_p50_s', 'recovery_p95_s')) {
    charts.push({
      file: 'recovery.svg',
      chart: {
        title: 'A killed worker’s step runs again after … (workers SIGKILLed mid model call)',
        subtitle: `recovery section, default lock and stall settings: ${measuredWith}`,
        unit: 's',
        series: ['seconds from the kill to the step running again'],
        groups: [
          { label: 'p50', values: [figures.recovery_p50_s] },
          { label: 'p95', values: [figures.recovery_p95_s] },
          { label: 'max', values: [figures.recovery_max_s] },
        ],
        marker: { value: 5, label: 'goal p95 ≤ 5 s' },
      },
    });
  }
  if (has(figures, 'ingest_chunks_per_s')) {
    charts.push({
      file: 'ingest.svg',
      chart: {
        title: 'Ingest through the queue into the embedded store (HotpotQA documents)',
        subtitle: `ingest section: ${measuredWith}`,
        unit: 'per second',
        series: ['chunks/s', 'documents/s'],
        groups: [{ label: 'ingest', values: [figures.ingest_chunks_per_s, figures.ingest_docs_per_s] }],
      },
    });
  }
  return charts;
}

const PEER_SYSTEMS: [string, string][] = [
  ['agentq', 'agentq'],
  ['restate', 'Restate 1.7'],
  ['dbos', 'DBOS 5.3 (PostgreSQL)'],
  ['langgraph', 'LangGraph.js 1.7 (Postgres checkpointer)'],
  ['chain', 'plain BullMQ chain'],
];
const PEER_WORKLOADS: [string, string][] = [
  ['noop', '10 no-op steps'],
  ['model0', '10 model steps, 0 ms model'],
  ['model200', '10 model steps, 200 ms model'],
];

/** `npm run bench:peers`: steps/s and CPU per step at 100 runs in flight, one bar per system that ran. */
function peersCharts(figures: Figures, measuredWith: string): { file: string; chart: BarChart }[] {
  const systems = PEER_SYSTEMS.filter(([system]) => has(figures, `${system}_rounds`));
  const chart = (measure: string, title: string, unit: string) => ({
    title,
    subtitle: `medians of alternating rounds: ${measuredWith}`,
    unit,
    series: systems.map(([, label]) => label),
    groups: PEER_WORKLOADS.map(([workload, label]) => ({
      label,
      values: systems.map(([system]) => figures[`${system}_${workload}_${measure}`]),
    })),
  });
  return [
    {
      file: 'peers-steps-per-second.svg',
      chart: chart('steps_per_s_r100', 'Durable steps per second, 100 runs in flight: agentq and its peers', 'steps/s'),
    },
    {
      file: 'peers-cpu-per-step.svg',
      chart: chart(
        'cpu_us_per_step_r100',
        'CPU per step over every process (servers too), 100 runs in flight (lower is better)',
        'µs',
      ),
    },
  ];
}

/** Metrics of an eval run drawn per set, as percentages. */
const EVAL_METRICS: [string, string][] = [
  ['recall@5', 'R@5'],
  ['all@5', 'all@5'],
  ['cited_doc_precision', 'cited-document precision'],
  ['answer_contains_gold', 'answer holds the gold answer'],
  ['right_company_at_1', 'right company first (SEC)'],
];

function evalCharts(runs: readonly EvalResults[]): { file: string; chart: BarChart }[] {
  const sets = [...new Set(runs.map((run) => run.set))];
  return sets.map((set) => {
    const ofSet = runs.filter((run) => run.set === set);
    const metrics = EVAL_METRICS.filter(([name]) => ofSet.some((run) => typeof run.figures[name] === 'number'));
    return {
      file: `eval-${set}.svg`,
      chart: {
        title: `Answer quality on ${set}, offline (extractive answers)`,
        subtitle: ofSet[0]?.command ?? `npm run eval -- --set ${set}`,
        unit: '%',
        max: 100,
        series: ofSet.map((run) => run.retrieval),
        groups: metrics.map(([name, label]) => ({ label, values: ofSet.map((run) => run.figures[name]) })),
      },
    };
  });
}

/** Every chart the given results can draw, as SVG. */
export function renderBenchCharts(bench: readonly BenchResults[], evals: readonly EvalResults[] = []): Chart[] {
  return [...bench.flatMap(benchCharts), ...evalCharts(evals)].map(({ file, chart }) => ({
    file,
    svg: renderBarChart(chart),
  }));
}
