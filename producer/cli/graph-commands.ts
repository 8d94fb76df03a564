import type { Command } from 'commander';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { AgentClient, GraphRollout } from '../client/agent-client.js';
import { UsageError, withClient as withFactoryClient } from './producer-commands.js';

interface Io {
  out(text: string): void;
}

interface RolloutFlags {
  current?: string;
  ramp?: string;
  percent?: string;
  pause?: boolean;
  promote?: boolean;
  rollback?: boolean;
  clear?: boolean;
  json?: boolean;
}

/** One line per rollout: `chain  current=1  ramp=2@10%` (or `ramp=none`, `current=latest`). */
export function formatRollout(rollout: GraphRollout): string {
  const ramp = rollout.ramp ? `${rollout.ramp.version}@${rollout.ramp.percent}%` : 'none';
  return `${rollout.graph}  current=${rollout.current ?? 'latest'}  ramp=${ramp}`;
}

/** The one change the flags ask for (the client call), or undefined for none (show the rollout). */
function changeOf(
  graph: string,
  flags: RolloutFlags,
): ((client: AgentClient) => Promise<GraphRollout | boolean>) | undefined {
  const actions = (['pause', 'promote', 'rollback', 'clear'] as const).filter((action) => flags[action]);
  if (actions.length > 1) throw new UsageError(`choose one of --${actions.join(', --')}`);
  const [action] = actions;
  const setting = flags.ramp !== undefined || flags.percent !== undefined;
  if (action && (setting || (flags.current !== undefined && action !== 'rollback')))
    throw new UsageError(`--${action} takes no other change${action === 'rollback' ? ' but --current' : ''}`);
  let percent: number | undefined;
  if (flags.percent !== undefined) {
    percent = Number(flags.percent);
    if (flags.percent.trim() === '' || !Number.isInteger(percent) || percent < 0 || percent > 100)
      throw new UsageError(`--percent must be a whole number from 0 to 100, got '${flags.percent}'`);
  }
  if (action === 'pause') return (client) => client.rollouts.pause(graph);
  if (action === 'promote') return (client) => client.rollouts.promote(graph);
  if (action === 'clear') return (client) => client.rollouts.clear(graph);
  if (action === 'rollback')
    return (client) => client.rollouts.rollback(graph, flags.current === undefined ? {} : { current: flags.current });
  if (!setting && flags.current === undefined) return undefined;
  return (client) =>
    client.rollouts.set(graph, {
      ...(flags.current === undefined ? {} : { current: flags.current }),
      ...(flags.ramp === undefined ? {} : { ramp: flags.ramp }),
      ...(percent === undefined ? {} : { percent }),
    });
}

/**
 * `agentq graph rollout <name>`: which version the graph's new runs get — show it, set the current version,
 * start or change a ramp, pause, promote, roll back, remove. As `/v1/graphs/:name/rollout`; the CLI talks to
 * Redis directly, so it acts as the deployment's operator.
 */
export function registerGraphCommands(program: Command, clientFactory: () => Promise<AgentClient>, io: Io): void {
  const graph = program.command('graph').description('graphs: which version new runs get (rollout)');
  graph
    .command('rollout')
    .description(
      "show or change a graph's rollout: a current version, and a ramping version a percent of new runs get (by a hash of the run id); runs already created keep theirs",
    )
    .argument('<name>', 'graph name')
    .option('--current <version>', 'the version new runs get (with --rollback: move it back to this one)')
    .option('--ramp <version>', 'start or change the ramp: the version a share of new runs get')
    .option('--percent <n>', "the ramping version's share of new runs, 0-100")
    .option('--pause', 'pause the ramp (0 %, its version kept)')
    .option('--promote', 'make the ramping version current')
    .option('--rollback', 'end the ramp (new runs get the current version)')
    .option('--clear', 'remove the rollout: new runs name no version, each worker runs its latest')
    .option('--json', 'print the rollout as JSON')
    .action(async (name: string, flags: RolloutFlags) => {
      const change = changeOf(name, flags);
      await withFactoryClient(clientFactory, async (client) => {
        let answer: GraphRollout | boolean;
        try {
          answer = change ? await change(client) : await client.rollouts.get(name);
        } catch (error) {
          if (AgentqError.isInstance(error) && error.code === 'INVALID_INPUT') throw new UsageError(error.message);
          throw error;
        }
        if (typeof answer === 'boolean') {
          if (!answer) throw new AgentqError('NOT_FOUND', `graph ${name} has no rollout to remove`);
          return io.out(flags.json ? JSON.stringify({ graph: name, cleared: true }) : `${name}  rollout removed`);
        }
        io.out(flags.json ? JSON.stringify(answer) : formatRollout(answer));
      });
    });
}
