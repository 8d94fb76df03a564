import { describe, expect, it } from 'vitest';
import { runPage } from '../../producer/api/inspector/run-page.js';
import { loadConfig } from '../../shared/config/config.js';
import { runPageData } from '../helpers/run-page-data.js';

/** The run page links a run's trace id to the trace viewer AGENTQ_TRACE_URL names. */
describe('run page trace link', () => {
  const data = runPageData({ trace: '0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331' });

  it('links the trace id with AGENTQ_TRACE_URL, and shows it as text without', () => {
    const traceUrl = loadConfig({ AGENTQ_TRACE_URL: 'http://localhost:16686/trace/{traceId}' }).traceUrl;
    expect(runPage({ ...data, traceUrl })).toContain(
      '<a id="trace-id" href="http://localhost:16686/trace/0af7651916cd43dd8448eb211c80319c"><code>0af7651916cd43dd8448eb211c80319c</code></a>',
    );
    expect(runPage(data)).toContain('<code id="trace-id">0af7651916cd43dd8448eb211c80319c</code>');
  });

  it('refuses an AGENTQ_TRACE_URL without {traceId}, naming the variable', () => {
    expect(() => loadConfig({ AGENTQ_TRACE_URL: 'http://localhost:16686/trace/' })).toThrow(
      /AGENTQ_TRACE_URL.*\{traceId\}/s,
    );
  });
});
