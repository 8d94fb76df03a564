/**
 * agentq/testing: test a graph without Redis or a worker. `runInProcess` runs it in this process with
 * the engine's node semantics; `MockLanguageModel` answers its model calls from a script;
 * `fakeNodeContext` hands a single node function a context of its own.
 */
export {
  runInProcess,
  type InProcessResult,
  type InProcessRetry,
  type InProcessStep,
  type RunInProcessOptions,
} from './run-in-process.js';
export type { InProcessEvent, InProcessToken } from './in-process-context.js';
export {
  MockLanguageModel,
  type MockLanguageModelOptions,
  type MockReply,
  type MockResult,
  type MockToolCall,
} from './mock-language-model.js';
export { fakeNodeContext, type FakeNodeContextOptions } from './fake-node-context.js';
