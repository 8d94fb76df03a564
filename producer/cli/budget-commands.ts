import type { Command } from 'commander';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { AgentClient } from '../client/agent-client.js';
import { UsageError, withClient as withFactoryClient } from './producer-commands.js';

interface Io {
  out(text: string): void;
}

const LIMIT_FLAGS = [
  ['tokensPerDay', '--tokens-per-day <n>', 'tokens per UTC day'],
  ['tokensPerMonth', '--tokens-per-month <n>', 'tokens per UTC month'],
  ['costUsdPerDay', '--cost-usd-per-day <usd>', 'cost (USD) per UTC day'],
  ['costUsdPerMonth', '--cost-usd-per-month <usd>', 'cost (USD) per UTC month'],
] as const;

/**
 * `agentq usage` (a tenant's spend per day and this month, by graph and model) and `agentq limits`
 * (`show`, `set`): the CLI side of tenant budgets, as `/v1/usage` and `/v1/admin/tenants/:tenant/limits`.
 * The CLI talks to Redis directly, so it acts as the deployment's operator.
 */
export function registerBudgetCommands(program: Command, clientFactory: () => Promise<AgentClient>, io: Io): void {
  const withClient = <T>(action: (client: AgentClient) => Promise<T>): Promise<T> =>
    withFactoryClient(clientFactory, action);

  program
    .command('usage')
    .description("a tenant's tokens, cost and model calls per UTC day and this month, by graph and model")
    .option('--days <n>', 'days to show, newest first (1-35, default 7)')
    .option('--tenant <tenant>', 'tenant (default AGENTQ_TENANT)')
    .option('--json', 'print {tenant, days, month} as JSON')
    .action(async (options: { days?: string; tenant?: string; json?: boolean }) => {
      const days = options.days === undefined ? undefined : Number(options.days);
      if (days !== undefined && (!Number.isInteger(days) || days < 1 || days > 35))
        throw new UsageError(`--days must be a whole number from 1 to 35, got '${options.days}'`);
      await withClient(async (client) => {
        const usage = await client.budgets.usage({
          ...(options.tenant ? { tenant: options.tenant } : {}),
          ...(days === undefined ? {} : { days }),
        });
        if (options.json) return io.out(JSON.stringify(usage));
        const line = (period: { period: string; tokens: number; costUsd: number; calls: number }) =>
          `${period.period}  tokens=${period.tokens}  cost_usd=${period.costUsd}  calls=${period.calls}`;
        io.out([`tenant ${usage.tenant}`, line(usage.month), ...usage.days.map(line)].join('\n'));
      });
    });

  const limits = program.command('limits').description("a tenant's token and cost budgets: show, set");
  limits
    .command('show')
    .description("the tenant's limits (its own, or the defaults from AGENTQ_TENANT_BUDGET_DEFAULTS)")
    .option('--tenant <tenant>', 'tenant (default AGENTQ_TENANT)')
    .action(async (options: { tenant?: string }) => {
      await withClient(async (client) =>
        io.out(JSON.stringify(await client.budgets.getLimits(options.tenant ? { tenant: options.tenant } : {}))),
      );
    });
  const set = limits
    .command('set')
    .description("replace the tenant's limits (a limit left out is unlimited; 0 allows nothing)")
    .option('--tenant <tenant>', 'tenant (default AGENTQ_TENANT)');
  for (const [, flag, what] of LIMIT_FLAGS) set.option(flag, what);
  set.action(async (options: Record<string, string | undefined>) => {
    const values: Record<string, number> = {};
    for (const [field, flag] of LIMIT_FLAGS) {
      const text = options[field];
      if (text === undefined) continue;
      const value = Number(text);
      if (text.trim() === '' || Number.isNaN(value))
        throw new UsageError(`${flag.split(' ')[0]} must be a number, got '${text}'`);
      values[field] = value;
    }
    await withClient(async (client) => {
      try {
        io.out(
          JSON.stringify(await client.budgets.setLimits(values, options.tenant ? { tenant: options.tenant } : {})),
        );
      } catch (error) {
        if (AgentqError.isInstance(error) && error.code === 'INVALID_INPUT') throw new UsageError(error.message);
        throw error;
      }
    });
  });
}
