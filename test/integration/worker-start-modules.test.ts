import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { moduleOwner, probeImport } from '../helpers/import-probe.js';
import { repoRoot } from '../helpers/node-entry.js';
import { loadScaledMs } from '../helpers/load-scale.js';

/**
 * What a worker loads before its first step is start-up time (module loading was most of the 2 s an
 * `agentq worker` took to take a step): the packages of optional parts are loaded when those parts are
 * used, not by importing the worker. The built file the CLI's `agentq worker` imports, in a fresh
 * process (the global setup builds dist/ when a source is newer).
 */
const OPTIONAL = {
  // MCP servers: only a worker configured with some connects (AGENTQ_MCP_SERVERS).
  '@modelcontextprotocol/sdk': 'the MCP client',
  ajv: 'the MCP client',
  // Tracing: only with an exporter configured (OTEL_TRACES_EXPORTER, an OTLP endpoint).
  '@opentelemetry/sdk-trace-node': 'the tracing SDK',
  '@opentelemetry/sdk-trace-base': 'the tracing SDK',
  '@opentelemetry/resources': 'the tracing SDK',
  // The http_fetch tool's HTML reduction: the first HTML page fetched.
  linkedom: 'the HTML parser',
  // GigaChat's TLS pool: the first GigaChat request.
  undici: 'the GigaChat HTTP pool',
  // Vector stores: only the one the settings name, when the ingest worker starts or the first search runs.
  '@qdrant/js-client-rest': 'the Qdrant client',
  'better-sqlite3': 'the embedded vector store',
};

describe('a worker start-up loads no optional part', { timeout: loadScaledMs(60_000) }, () => {
  it('importing start-worker (what `agentq worker` imports) loads none of their packages', async () => {
    const { modules } = await probeImport({
      imports: [
        { specifier: pathToFileURL(join(repoRoot, 'dist/worker/start-worker.js')).href, names: ['startWorker'] },
      ],
      recordModules: true,
    });
    const owners = new Set(modules.map((path) => moduleOwner(path)));
    // The probe sees what it should: the worker, BullMQ, Redis and the model SDK its steps call.
    expect(owners).toContain('dist/worker/start-worker.js');
    expect(owners).toContain('bullmq');
    expect(owners).toContain('openai');
    const loaded = Object.entries(OPTIONAL)
      .filter(([name]) => owners.has(name))
      .map(([name, part]) => `${name} (${part})`);
    expect(loaded).toEqual([]);
  });
});
