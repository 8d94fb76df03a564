import type { Command } from 'commander';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import type { AgentClient, ReplayReport } from '../client/agent-client.js';
import { parseCount } from './producer-commands.js';
import { UsageError } from './usage-error.js';

interface Io {
  out(text: string): void;
  err(text: string): void;
  setExitCode(code: number): void;
}

/** `--set key=value`, repeatable: the value is JSON when it parses as JSON, else the text itself. */
function collectSet(entry: string, patch: Record<string, unknown> = {}): Record<string, unknown> {
  const at = entry.indexOf('=');
  if (at <= 0) throw new UsageError(`--set takes key=value (a state key and its new value), got '${entry}'`);
  const text = entry.slice(at + 1);
  let value: unknown = text;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON: the text itself (`--set query=what about bananas`).
  }
  return { ...patch, [entry.slice(0, at)]: value };
}

function parseStep(value: string): number {
  const step = Number(value);
  if (!Number.isInteger(step) || step < 0)
    throw new UsageError(`--from must be a step index (0, 1, … as agentq steps numbers them), got '${value}'`);
  return step;
}

/** One line per replay: same, diverged at step k, or failed. */
function describeReport(report: ReplayReport): string {
  const head = `${report.replayOf} → ${report.runId}: `;
  if (report.outcome === 'same') return `${head}same`;
  if (report.outcome === 'diverged') {
    const diff = (report.diff ?? [])
      .map((entry) => `  ${entry.path}: ${JSON.stringify(entry.recorded)} → ${JSON.stringify(entry.replayed)}`)
      .join('\n');
    return `${head}diverged at step ${report.step} (${report.node}, ${report.reason})${diff ? `\n${diff}` : ''}`;
  }
  if (report.outcome === 'failed') return `${head}failed: ${report.error?.code}: ${report.error?.message}`;
  return `${head}${report.status} (not finished)`;
}

/** `agentq fork` and `agentq replay`. */
export function registerTimeTravelCommands(program: Command, client: () => Promise<AgentClient>, io: Io): void {
  registerForkCommand(program, client, io);
  registerReplayCommand(program, client, io);
}

/** `agentq fork`: a new run from one of a run's steps, optionally with state keys replaced. */
function registerForkCommand(program: Command, client: () => Promise<AgentClient>, io: Io): void {
  program
    .command('fork')
    .description(
      'fork a finished (or waiting) run from one of its steps: a new run with its state, history and steps as committed before that step',
    )
    .argument('<runId>')
    .requiredOption('--from <step>', 'the step to fork from, as `agentq steps` numbers it', parseStep)
    .option(
      '--set <key=value>',
      "replace a state key in the fork (repeatable); the value is JSON when it parses, else text: --set 'query=what about bananas'",
      collectSet,
    )
    .option('--graph-version <version>', 'run the fork on this graph version (default: the original’s)')
    .option('--queue-unserved', 'queue it even if no live worker serves that graph version')
    .option('--wait', 'wait for the fork to finish')
    .option('--timeout-ms <ms>', 'with --wait: give up after this long', parseCount('--timeout-ms'))
    .option('--json', 'print the run record as JSON')
    .action(
      async (
        runId: string,
        options: {
          from: number;
          set?: Record<string, unknown>;
          graphVersion?: string;
          queueUnserved?: boolean;
          wait?: boolean;
          timeoutMs?: number;
          json?: boolean;
        },
      ) => {
        const agent = await client();
        try {
          let record: RunRecord = await agent.fork(runId, {
            from: options.from,
            ...(options.set ? { set: options.set } : {}),
            ...(options.graphVersion ? { graphVersion: options.graphVersion } : {}),
            ...(options.queueUnserved ? { queueUnserved: true } : {}),
          });
          if (options.wait) {
            io.err(`forked ${runId} at step ${options.from} as ${record.id}; waiting…`);
            record = await agent.wait(
              record.id,
              options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs },
            );
            io.setExitCode(record.status === 'failed' || record.status === 'cancelled' ? 1 : 0);
          }
          io.out(
            options.json
              ? JSON.stringify(record)
              : options.wait
                ? `${record.id}  ${record.status}  steps=${record.stepCount}${record.output == null ? '' : `\noutput: ${JSON.stringify(record.output)}`}${record.error ? `\nerror: ${record.error.code}: ${record.error.message}` : ''}`
                : record.id,
          );
        } finally {
          await agent.close();
        }
      },
    );
}

/** `agentq replay`: runs again on their recordings, each reported as same, diverged or failed. */
function registerReplayCommand(program: Command, client: () => Promise<AgentClient>, io: Io): void {
  program
    .command('replay')
    .description(
      "re-run finished runs' inputs with their recorded model and tool answers (no paid call) and report the first divergence; exit 1 when any diverged or failed",
    )
    .argument('[runIds...]', 'the runs to replay')
    .option('--batch <batchId>', 'replay every run of this batch')
    .option('--graph-version <version>', 'replay against this graph version (default: each run’s own)')
    .option('--continue-live', 'after the first divergence go on with live (paid) calls instead of stopping')
    .option('--timeout-ms <ms>', 'give up waiting for a replay after this long', parseCount('--timeout-ms'))
    .option('--json', 'one run: print its report as one JSON object; several: {summary, reports}')
    .action(
      async (
        runIds: string[],
        options: { batch?: string; graphVersion?: string; continueLive?: boolean; timeoutMs?: number; json?: boolean },
      ) => {
        if (runIds.length === 0 && !options.batch)
          throw new UsageError('name the runs to replay (agentq replay <runId>…) or a batch (--batch <batchId>)');
        const agent = await client();
        try {
          const ids = [...runIds];
          if (options.batch) {
            const results = await agent.batches.results(options.batch);
            if (!results) throw new UsageError(`batch ${options.batch} not found (it may have expired)`);
            ids.push(...results.map((result) => result.runId));
          }
          const replays: RunRecord[] = [];
          for (const id of ids)
            replays.push(
              await agent.replay(id, {
                ...(options.graphVersion ? { graphVersion: options.graphVersion } : {}),
                ...(options.continueLive ? { continueLive: true } : {}),
              }),
            );
          io.err(`replaying ${replays.length} run${replays.length === 1 ? '' : 's'}…`);
          const reports: ReplayReport[] = [];
          for (const replay of replays) {
            await agent.wait(replay.id, options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs });
            reports.push(await agent.replayReport(replay.id));
          }
          const count = (outcome: ReplayReport['outcome']) => reports.filter((report) => report.outcome === outcome);
          const summary = {
            total: reports.length,
            same: count('same').length,
            diverged: count('diverged').map(({ replayOf, runId, step, node }) => ({
              runId: replayOf,
              replay: runId,
              step,
              node,
            })),
            failed: count('failed').map(({ replayOf, runId, error }) => ({ runId: replayOf, replay: runId, error })),
          };
          io.setExitCode(summary.same === summary.total ? 0 : 1);
          if (options.json)
            io.out(JSON.stringify(reports.length === 1 && !options.batch ? reports[0] : { summary, reports }));
          else {
            io.out(reports.map(describeReport).join('\n'));
            if (reports.length > 1)
              io.out(
                `${summary.total} replayed: ${summary.same} same, ${summary.diverged.length} diverged, ${summary.failed.length} failed`,
              );
          }
        } finally {
          await agent.close();
        }
      },
    );
}
