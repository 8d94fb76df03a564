import type { Command } from 'commander';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { ScheduleRecord } from '../../shared/operations/schedules/schedules.js';
import type { AgentClient } from '../client/agent-client.js';
import { UsageError, withClient as withFactoryClient } from './producer-commands.js';
import { readRunInput } from './read-run-input.js';

interface Io {
  out(text: string): void;
}

type Options = Record<string, string | number | boolean | undefined>;

/** One line per schedule: id, state, when, graph, next and last run. */
function describe(schedule: ScheduleRecord): string {
  const when =
    schedule.cron !== undefined
      ? `cron '${schedule.cron}'${schedule.tz ? ` ${schedule.tz}` : ''}`
      : `every ${schedule.everyMs} ms`;
  const state = schedule.paused ? 'paused' : 'active';
  return `${schedule.id}  ${state}  ${when}  ${schedule.graph}  next=${schedule.nextRunAt ?? '-'}  last=${schedule.lastRun ? `${schedule.lastRun.runId}@${schedule.lastRun.scheduledFor}` : '-'}${schedule.name ? `  ${schedule.name}` : ''}`;
}

/** A bad spec is a usage error (exit 2) naming the field, like `agentq run`'s. */
async function checked<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (AgentqError.isInstance(error) && error.code === 'INVALID_INPUT') throw new UsageError(error.message);
    throw error;
  }
}

function found<T>(scheduleId: string, value: T | null): T {
  if (value === null) throw new AgentqError('NOT_FOUND', `schedule ${scheduleId} not found (see agentq schedule list)`);
  return value;
}

/** The spec fields the create and change commands share, from their options. */
async function specOf(options: Options): Promise<Record<string, unknown>> {
  const spec: Record<string, unknown> = {};
  if (options.input !== undefined || options.inputFile !== undefined) {
    spec.input = await readRunInput({
      ...(options.input === undefined ? {} : { input: String(options.input) }),
      ...(options.inputFile === undefined ? {} : { inputFile: String(options.inputFile) }),
    });
  }
  if (options.cron !== undefined) spec.cron = String(options.cron);
  if (options.tz !== undefined) spec.tz = String(options.tz);
  if (options.every !== undefined) {
    const every = Number(options.every);
    if (!Number.isInteger(every))
      throw new UsageError(`--every must be whole milliseconds, got '${String(options.every)}'`);
    spec.everyMs = every;
  }
  if (options.start !== undefined) spec.startAt = String(options.start);
  if (options.end !== undefined) spec.endAt = String(options.end);
  if (options.priority !== undefined) spec.priority = Number(options.priority);
  if (options.name !== undefined) spec.name = String(options.name);
  if (options.graphVersion !== undefined) spec.graphVersion = String(options.graphVersion);
  return spec;
}

/**
 * `agentq schedule create|list|show|runs|pause|resume|change|delete`: scheduled runs of the client's
 * tenant (AGENTQ_TENANT, or --tenant), the same operations as `/v1/schedules`.
 */
export function registerScheduleCommands(program: Command, clientFactory: () => Promise<AgentClient>, io: Io): void {
  const withClient = <T>(action: (client: AgentClient) => Promise<T>): Promise<T> =>
    withFactoryClient(clientFactory, action);
  const schedule = program
    .command('schedule')
    .description('scheduled runs: create, list, show, runs, pause, resume, change, delete');
  registerSpecCommands(schedule, withClient, io);
  registerExistingCommands(schedule, withClient, io);
}

/** With a client made for the command, closed after it. */
type WithClient = <T>(action: (client: AgentClient) => Promise<T>) => Promise<T>;

/** `schedule create` and `schedule change`: the commands that take a schedule's spec (timing, input, …). */
function registerSpecCommands(schedule: Command, withClient: WithClient, io: Io): void {
  const timing = (command: Command) =>
    command
      .option('--cron <expr>', "cron expression, e.g. '0 9 * * 1-5' (a sixth leading field is seconds)")
      .option('--tz <zone>', "the cron's IANA time zone, e.g. Europe/Berlin (default UTC)")
      .option('--every <ms>', 'instead of --cron: every this many milliseconds (at least 1000)')
      .option('--start <iso>', 'no tick before this time (ISO 8601)')
      .option('--end <iso>', 'no tick after this time (ISO 8601)')
      .option('--input <json>', "the runs' input as JSON; '-' reads it from stdin")
      .option('--input-file <file>', "read the runs' input (JSON) from a file")
      .option('--graph-version <version>', 'pin a graph version')
      .option('--priority <n>', 'BullMQ priority of its runs (1 most urgent)')
      .option('--name <label>', 'a label for people')
      .option('--tenant <tenant>', 'tenant (default AGENTQ_TENANT)')
      .option('--json', 'print the schedule as JSON');

  timing(
    schedule
      .command('create')
      .description('create a schedule of <graph> (give --cron or --every)')
      .argument('<graph>', 'graph name'),
  )
    .option('--paused', 'create it paused')
    .action(async (graph: string, options: Options) => {
      const spec = { graph, input: null, ...(await specOf(options)), ...(options.paused ? { paused: true } : {}) };
      await withClient(async (client) => {
        const created = await checked(() =>
          client.schedules.create(spec, options.tenant ? { tenant: String(options.tenant) } : {}),
        );
        io.out(options.json ? JSON.stringify(created) : created.id);
      });
    });

  timing(
    schedule
      .command('change')
      .description("change a schedule's timing, input or other fields")
      .argument('<scheduleId>'),
  ).action(async (scheduleId: string, options: Options) => {
    const patch = await specOf(options);
    if (Object.keys(patch).length === 0)
      throw new UsageError(
        'nothing to change: give at least one of --cron, --every, --tz, --start, --end, --input, --priority, --name',
      );
    await withClient(async (client) => {
      const changed = found(
        scheduleId,
        await checked(() =>
          client.schedules.update(scheduleId, patch, options.tenant ? { tenant: String(options.tenant) } : {}),
        ),
      );
      io.out(options.json ? JSON.stringify(changed) : describe(changed));
    });
  });
}

/** `schedule list|show|pause|resume|runs|delete`: the commands on existing schedules. */
function registerExistingCommands(schedule: Command, withClient: WithClient, io: Io): void {
  schedule
    .command('list')
    .description("the tenant's schedules")
    .option('--tenant <tenant>', 'tenant (default AGENTQ_TENANT)')
    .option('--json', 'print {schedules} as JSON')
    .action(async (options: Options) => {
      await withClient(async (client) => {
        const schedules = await client.schedules.list(options.tenant ? { tenant: String(options.tenant) } : {});
        io.out(options.json ? JSON.stringify({ schedules }) : schedules.map(describe).join('\n'));
      });
    });

  for (const [name, description] of [
    ['show', 'show a schedule with its next and last runs'],
    ['pause', 'pause a schedule (no ticks until resumed)'],
    ['resume', 'resume a paused schedule'],
  ] as const) {
    schedule
      .command(name)
      .description(description)
      .argument('<scheduleId>')
      .option('--tenant <tenant>', 'tenant (default AGENTQ_TENANT)')
      .option('--json', 'print the schedule as JSON')
      .action(async (scheduleId: string, options: Options) => {
        await withClient(async (client) => {
          const scope = options.tenant ? { tenant: String(options.tenant) } : {};
          const result =
            name === 'show'
              ? await client.schedules.get(scheduleId, scope)
              : await client.schedules[name](scheduleId, scope);
          const record = found(scheduleId, result);
          io.out(options.json ? JSON.stringify(record) : describe(record));
        });
      });
  }

  schedule
    .command('runs')
    .description("the runs a schedule's ticks started, newest first")
    .argument('<scheduleId>')
    .option('--tenant <tenant>', 'tenant (default AGENTQ_TENANT)')
    .option('--json', 'print {runs} as JSON')
    .action(async (scheduleId: string, options: Options) => {
      await withClient(async (client) => {
        const runs = found(
          scheduleId,
          await client.schedules.runs(scheduleId, options.tenant ? { tenant: String(options.tenant) } : {}),
        );
        io.out(
          options.json ? JSON.stringify({ runs }) : runs.map((run) => `${run.runId}  ${run.scheduledFor}`).join('\n'),
        );
      });
    });

  schedule
    .command('delete')
    .description('delete a schedule (the runs it started stay)')
    .argument('<scheduleId>')
    .option('--tenant <tenant>', 'tenant (default AGENTQ_TENANT)')
    .action(async (scheduleId: string, options: Options) => {
      await withClient(async (client) => {
        if (!(await client.schedules.delete(scheduleId, options.tenant ? { tenant: String(options.tenant) } : {})))
          found(scheduleId, null);
        io.out(`${scheduleId} deleted`);
      });
    });
}
