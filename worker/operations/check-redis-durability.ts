import { redisNodes, type RedisConnection } from '../../shared/redis/connect-redis.js';
import type { Config } from '../../shared/config/config.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { Logger } from '../../shared/telemetry/logger.js';

/**
 * Runs survive a Redis restart only with AOF on, and only stay whole with `maxmemory-policy noeviction`
 * (an evicted run key is a lost run). In production a Redis without both is refused; in development
 * it is a warning. AGENTQ_ALLOW_UNSAFE_REDIS=true downgrades the refusal to a warning.
 */
export async function checkRedisDurability(
  redis: RedisConnection,
  config: Pick<Config, 'production' | 'allowUnsafeRedis'>,
  logger: Logger,
): Promise<void> {
  const problems: string[] = [];
  // On a Cluster every node, replicas too: a replica is promoted with the settings it has.
  const nodes = await redisNodes(redis, 'all');
  for (const node of nodes) {
    const where = nodes.length > 1 ? `node ${node.options.host}:${node.options.port}: ` : '';
    const persistence = await node.info('persistence');
    if (!/aof_enabled:1/.test(persistence))
      problems.push(`${where}appendonly is off (set \`appendonly yes\`, e.g. \`redis-server --appendonly yes\`)`);
    try {
      const policy = (await node.config('GET', 'maxmemory-policy')) as string[];
      if (policy[1] && policy[1] !== 'noeviction')
        problems.push(`${where}maxmemory-policy is ${policy[1]} (set \`maxmemory-policy noeviction\`)`);
    } catch {
      logger.warn(`${where}cannot read maxmemory-policy (CONFIG is disabled); make sure it is noeviction`);
    }
  }
  if (problems.length === 0) return;
  const message = `Redis is not safe for agentq: ${problems.join('; ')}`;
  if (config.production && !config.allowUnsafeRedis) {
    throw new AgentqError(
      'INVALID_INPUT',
      `${message}. Refusing to start with NODE_ENV=production (AGENTQ_ALLOW_UNSAFE_REDIS=true overrides).`,
    );
  }
  logger.warn(message);
}
