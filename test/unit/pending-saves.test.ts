import { describe, expect, it } from 'vitest';
import { commitBehindSaves, PendingSaves } from '../../worker/engine/pending-saves.js';

/** A promise and its settle functions, to order a save's reply against a commit by hand. */
function deferred<T = unknown>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((yes, no) => ((resolve = yes), (reject = no)));
  return { promise, resolve, reject };
}

/**
 * Paid results' saves the node does not wait for (the engine's side, with Redis and a worker, is
 * test/integration/pending-saves.test.ts): the commit goes out before a save's reply, and the step waits for
 * the saves where another delivery could look for them, and for the paid calls' bookkeeping after its commit.
 */
describe('PendingSaves', () => {
  it('the commit is sent before the save has answered, and the step ends only once both have', async () => {
    const pending = new PendingSaves();
    const save = deferred();
    pending.sent(save.promise);
    const order: string[] = [];
    const committing = commitBehindSaves(pending, async () => {
      order.push('commit sent');
      return 'committed';
    }).then((result) => order.push(`step ended: ${result}`));
    await Promise.resolve();
    expect(order).toEqual(['commit sent']);
    save.resolve('ok');
    await committing;
    expect(order).toEqual(['commit sent', 'step ended: committed']);
  });

  it('a save that failed fails the step where it is waited for (a next paid call, a failure, a parallel task), and is no unhandled rejection meanwhile', async () => {
    const pending = new PendingSaves();
    pending.sent(Promise.reject(new Error('Redis refused')));
    await new Promise((resolve) => setImmediate(resolve));
    await expect(pending.landed()).rejects.toThrow('Redis refused');
    // Waited for once: a later wait does not fail again for it.
    await expect(pending.landed()).resolves.toBeUndefined();
  });

  it("once the commit is in, a save's failure is not the step's: the commit's result stands", async () => {
    const pending = new PendingSaves();
    pending.sent(Promise.reject(new Error('the run ended before this late save')));
    await expect(commitBehindSaves(pending, async () => 'fenced')).resolves.toBe('fenced');
  });

  it("a commit that failed fails the step, after the saves and the paid calls' bookkeeping", async () => {
    const pending = new PendingSaves();
    const count = deferred();
    let counted = false;
    pending.alongside(count.promise.then(() => (counted = true)));
    pending.sent(Promise.resolve('ok'));
    const committing = commitBehindSaves(pending, async () => Promise.reject(new Error('connection lost')));
    setImmediate(() => count.resolve(undefined));
    await expect(committing).rejects.toThrow('connection lost');
    expect(counted).toBe(true);
  });

  it("the paid calls' bookkeeping is waited for after the commit; its failures are its own", async () => {
    const pending = new PendingSaves();
    pending.alongside(Promise.reject(new Error('could not count')));
    const count = deferred();
    let counted = false;
    pending.alongside(count.promise.then(() => (counted = true)));
    const committing = commitBehindSaves(pending, async () => 'advanced');
    setImmediate(() => count.resolve(undefined));
    await expect(committing).resolves.toBe('advanced');
    expect(counted).toBe(true);
  });

  it('without pending saves (a context outside a worker) the commit is the commit', async () => {
    await expect(commitBehindSaves(undefined, async () => 'advanced')).resolves.toBe('advanced');
  });
});
