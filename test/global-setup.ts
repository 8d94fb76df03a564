import type { TestProject } from 'vitest/node';
import { startPrivateRedis, type PrivateRedis } from '../shared/redis/private-redis-server.js';

let redis: PrivateRedis | undefined;

/** One private redis-server for the whole run, on a free loopback port; tests isolate by key/queue prefix. */
export async function setup(project: TestProject): Promise<void> {
  try {
    redis = await startPrivateRedis();
  } catch (error) {
    throw new Error(`tests need redis-server on PATH (Debian: apt-get install -y redis-server): ${(error as Error).message}`, { cause: error });
  }
  project.provide('redisUrl', redis.url);
}

export async function teardown(): Promise<void> {
  await redis?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}
