import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The lint wall around the BullMQ seam (eslint.config.js, shared/bullmq/README.md): outside shared/bullmq/
 * no code may import BullMQ's files by path, its plumbing exports, or use the Worker members BullMQ keeps
 * private or protected; inside the seam the same code is allowed.
 */
describe('the BullMQ seam lint rules', () => {
  const eslint = new ESLint({ cwd: process.cwd() });
  const internals = [
    "import { createRequire } from 'node:module';",
    "import { QueueKeys, Worker } from 'bullmq';",
    "import type { LockManager } from 'bullmq';",
    // eslint-disable-next-line no-restricted-syntax -- the sample the rule must catch, as text
    "export const script = createRequire(import.meta.url)('bullmq/dist/cjs/scripts/moveToActive-11.js');",
    "export const keys = new QueueKeys('bull').getKeys('q');",
    'export type Locks = LockManager;',
    'export class Sneaky extends Worker {',
    '  async moveToActive(): Promise<undefined> {',
    '    return undefined;',
    '  }',
    '  run2(): void {',
    '    (this as unknown as { mainLoop(): void }).mainLoop();',
    '  }',
    '}',
    '',
  ].join('\n');

  async function seamErrors(filePath: string): Promise<string[]> {
    const [result] = await eslint.lintText(internals, { filePath });
    return result!.messages
      .filter((message) => message.ruleId === 'no-restricted-imports' || message.ruleId === 'no-restricted-syntax')
      .map((message) => `${message.line}: ${message.message}`);
  }

  it('reports every reach into BullMQ internals outside shared/bullmq/', async () => {
    const errors = await seamErrors('worker/engine/sneaky-worker.ts');
    // QueueKeys and LockManager imports, the dist path, the LockManager type, the moveToActive override
    // and the mainLoop member.
    expect(errors.map((error) => Number(error.split(':')[0])).sort((a, b) => a - b)).toEqual([2, 3, 4, 6, 8, 12]);
    for (const error of errors) expect(error).toContain('only shared/bullmq/ may use it');
  });

  it('allows the same code inside shared/bullmq/', async () => {
    expect(await seamErrors('shared/bullmq/sneaky-worker.ts')).toEqual([]);
  });
});
