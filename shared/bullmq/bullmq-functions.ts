import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';

/**
 * BullMQ's own Lua scripts, wrapped as Lua functions, so one agentq script can commit a step, add the
 * next step job and finish the current one (and fetch the next) in one round trip (engine v2,
 * docs/concepts/step-engine.md). They are the scripts of the installed bullmq, not copies, so a job added or finished
 * here is exactly what BullMQ would have written; what agentq relies on is their KEYS/ARGV layout, which BULLMQ_VERSION
 * pins and test/unit/bullmq-functions.test.ts guards (an upgrade that changes a script fails it loudly).
 */
export const BULLMQ_VERSION = '6.7.0';

/** sha1 of each script's text in BULLMQ_VERSION: the guard test compares them with the installed ones. */
export const BULLMQ_SCRIPT_SHA1: Record<BullmqScriptName, string> = {
  addStandardJob: '5ab432e88830d573e2fa33392ffbd4ad25a9b100',
  addPrioritizedJob: '299880da0f75f0b376ee8e87d20eae62f964ac5e',
  moveToActive: 'd96ca626f1ea141b44a856b312fc636d99aa9ea9',
  moveToFinished: '69666e69dd5621df59067a03de685e55a486560d',
  moveStalledJobsToWait: '1e9bb7deb6219644a634d32c430ce15ed39a377e',
};

export type BullmqScriptName =
  'addStandardJob' | 'addPrioritizedJob' | 'moveToActive' | 'moveToFinished' | 'moveStalledJobsToWait';

interface BullmqScript {
  name: string;
  content: string;
  keys: number;
}

const require = createRequire(import.meta.url);

/** The installed bullmq's version (its package.json). */
export function installedBullmqVersion(): string {
  return (require('bullmq/package.json') as { version: string }).version;
}

/** The installed bullmq's text of one script, with its KEYS count. */
export function bullmqScript(name: BullmqScriptName): BullmqScript {
  const file = {
    addStandardJob: 'addStandardJob-9',
    addPrioritizedJob: 'addPrioritizedJob-9',
    moveToActive: 'moveToActive-11',
    moveToFinished: 'moveToFinished-14',
    moveStalledJobsToWait: 'moveStalledJobsToWait-9',
  }[name];
  const module = require(`bullmq/dist/cjs/scripts/${file}.js`) as Record<string, BullmqScript>;
  const script = module[name];
  if (!script)
    throw new Error(
      `bullmq ${installedBullmqVersion()} has no script ${file}; agentq's engine is pinned to bullmq ${BULLMQ_VERSION}`,
    );
  return script;
}

export function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

/**
 * `local function bull_<name>(KEYS, ARGV) <BullMQ's script> end` for each script: inside, KEYS and ARGV
 * are the tables the caller passes, so the script runs unchanged on the keys and arguments agentq builds.
 */
export function bullmqFunctionsLua(names: BullmqScriptName[]): string {
  return names.map((name) => `local function bull_${name}(KEYS, ARGV)\n${bullmqScript(name).content}\nend\n`).join('');
}

/** Throws when the installed bullmq is not the one the wrapped scripts' layout was checked against. */
export function assertBullmqPinned(): void {
  const installed = installedBullmqVersion();
  if (installed !== BULLMQ_VERSION) {
    throw new Error(
      `agentq's step engine runs BullMQ's scripts with the KEYS/ARGV layout of bullmq ${BULLMQ_VERSION}, but bullmq ${installed} is installed; install bullmq@${BULLMQ_VERSION} (package.json pins it)`,
    );
  }
}
