import { z } from 'zod';
import { toRunRecord } from '../../../shared/store/redis-run-store.js';
import { isTerminal } from '../../../shared/contracts/run-record.js';
import { type InspectorHelpers, type PageScope, pageIdParams as idParams } from './inspector-helpers.js';
import { registerTimeTravelForms } from './time-travel-forms.js';

/** The run page's forms: cancel, retry, resume, and the time-travel ones (fork, replay). */
export function registerRunForms(pages: PageScope, helpers: InspectorHelpers): void {
  const { context, ownRun, back, notFoundPage } = helpers;
  const { client, inflight } = context;

  pages.post('/runs/:id/cancel', { schema: { hide: true, params: idParams } }, async (request, reply) => {
    const meta = await ownRun(request, request.params.id);
    if (!meta) return notFoundPage(reply, `run ${request.params.id}`);
    const record = isTerminal(meta.status) ? toRunRecord(meta) : await client.cancel(meta.id);
    return back(request, reply, meta.id, `cancel: the run is ${record.status}`);
  });

  pages.post('/runs/:id/retry', { schema: { hide: true, params: idParams } }, async (request, reply) => {
    const meta = await ownRun(request, request.params.id);
    if (!meta) return notFoundPage(reply, `run ${request.params.id}`);
    if (meta.status !== 'failed')
      return back(request, reply, meta.id, `retry: the run is ${meta.status}; only a failed run can be retried`);
    if (!(await inflight.reserve(meta.tenant, meta.id)))
      return back(
        request,
        reply,
        meta.id,
        `retry: tenant ${meta.tenant} has ${inflight.max} runs in flight (AGENTQ_TENANT_MAX_INFLIGHT)`,
      );
    try {
      await client.retry(meta.id);
    } catch (error) {
      await inflight.release(meta.tenant, meta.id).catch(() => undefined);
      throw error;
    }
    return back(request, reply, meta.id, 'retry: the run continues from its last commit');
  });

  registerTimeTravelForms(pages, { client, ownRun, back, notFoundPage });

  pages.post(
    '/runs/:id/resume',
    { schema: { hide: true, params: idParams, body: z.object({ value: z.string().max(100_000) }).loose() } },
    async (request, reply) => {
      const meta = await ownRun(request, request.params.id);
      if (!meta) return notFoundPage(reply, `run ${request.params.id}`);
      let value: unknown = request.body.value;
      try {
        value = JSON.parse(request.body.value);
      } catch {
        // Plain text is an answer too.
      }
      if (meta.status !== 'waiting')
        return back(request, reply, meta.id, `resume: the run is ${meta.status}, not waiting`);
      await client.resume(meta.id, value);
      return back(request, reply, meta.id, 'resume: the answer was sent');
    },
  );
}
