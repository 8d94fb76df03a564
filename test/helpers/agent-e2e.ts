import { afterAll, beforeAll, beforeEach } from 'vitest';
import {
  startScriptedOpenAIServer,
  type ScriptedOpenAIServer,
  type ScriptedOpenAIServerOptions,
} from '../fakes/scripted-openai-server.js';
import { lateBound } from './late-bound.js';
import { startTestEnv, type TestEnv } from './test-env.js';

export type AgentEnvOptions = NonNullable<Parameters<typeof startTestEnv>[0]>;

export interface AgentE2EOptions extends AgentEnvOptions {
  /** The scripted server's options. */
  server?: ScriptedOpenAIServerOptions;
}

export interface AgentE2E {
  /** The scripted OpenAI-compatible server; reset before each test. */
  server: ScriptedOpenAIServer;
  /** A worker and a client whose model endpoint is `server`, model `scripted-chat`. */
  env: TestEnv;
}

/**
 * An agent end to end, as most agent tests start it: in the enclosing describe block, a scripted OpenAI
 * server (beforeAll), a worker and a client on a test config pointed at it through the real openai SDK
 * (`OPENAI_BASE_URL`, `LLM_MODEL=scripted-chat`, then `options.env`), the server's script and log reset
 * before each test, and both closed afterwards. The answer's `server` and `env` can be named at once;
 * they forward to what the hooks started.
 */
export function useAgentE2E(options: AgentE2EOptions = {}): AgentE2E {
  let server: ScriptedOpenAIServer | undefined;
  let env: TestEnv | undefined;
  beforeAll(async () => {
    const { server: serverOptions, env: extraEnv, ...envOptions } = options;
    server = await startScriptedOpenAIServer(serverOptions);
    env = await startTestEnv({
      ...envOptions,
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat', ...extraEnv },
    });
  });
  afterAll(async () => {
    await env?.close();
    await server?.close();
  });
  beforeEach(() => server?.reset());
  return {
    server: lateBound('the scripted OpenAI server', () => server),
    env: lateBound('the agent test env', () => env),
  };
}
