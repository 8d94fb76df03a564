import { Redis } from 'ioredis';

/** What a benchmark process has spent so far: CPU (user + system, µs) and Redis commands its clients sent. */
export interface MeterReading {
  cpuUs: number;
  commands: number;
}

let commands = 0;
let installed = false;

/**
 * Counts every command any ioredis client of this process sends (BullMQ's included: they share the
 * prototype), so a figure can say how many client round trips a step costs — Redis's own commandstats
 * also count the calls a Lua script makes inside Redis, which are not round trips.
 */
export function installCommandCounter(): void {
  if (installed) return;
  installed = true;
  const send = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function countedSendCommand(this: Redis, ...args: Parameters<typeof send>) {
    commands += 1;
    return send.apply(this, args);
  } as typeof send;
}

export function readMeter(): MeterReading {
  const usage = process.cpuUsage();
  return { cpuUs: usage.user + usage.system, commands };
}

/** Answers `{type: 'meter'}` IPC requests with this process's reading (bench/workers/*). */
export function answerMeterRequests(): void {
  installCommandCounter();
  process.on('message', (message: { type: string }) => {
    if (message.type === 'meter') process.send?.({ type: 'meter', ...readMeter() });
  });
}

/** Redis's own CPU so far (INFO cpu: used_cpu_user + used_cpu_sys), in µs. */
export async function redisCpuUs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const user = Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1] ?? 0);
  const system = Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1] ?? 0);
  return (user + system) * 1e6;
}
