import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import type { RunMeta } from '../../../shared/store/redis-run-store.js';
import type { AgentClient } from '../../client/agent-client.js';
import { type PageScope, pageIdParams as idParams } from './inspector-helpers.js';

interface FormDeps {
  client: AgentClient;
  ownRun(request: FastifyRequest, runId: string): Promise<RunMeta | null>;
  back(request: FastifyRequest, reply: FastifyReply, runId: string, notice: string): Promise<FastifyReply>;
  notFoundPage(reply: FastifyReply, what: string): FastifyReply;
}

/** What a refused fork or replay says on the page it came from: the error's own message. */
function refusal(action: string, error: unknown): string {
  if (AgentqError.isInstance(error)) return `${action}: ${error.code}: ${error.message}`;
  throw error;
}

/**
 * The run page's time-travel forms: fork from a step (with an optional JSON state patch) and
 * replay against the recording. Each goes to the new run's page; a refusal comes back to this run's page
 * as its notice. Registered inside the inspector's guarded scope (same-origin, CSRF, rate limit).
 */
export function registerTimeTravelForms(scope: PageScope, deps: FormDeps): void {
  const { client, ownRun, back, notFoundPage } = deps;

  scope.post(
    '/runs/:id/fork',
    {
      schema: {
        hide: true,
        params: idParams,
        body: z.object({ step: z.string().max(12), set: z.string().max(100_000).optional() }).loose(),
      },
    },
    async (request, reply) => {
      const meta = await ownRun(request, request.params.id);
      if (!meta) return notFoundPage(reply, `run ${request.params.id}`);
      const from = Number(request.body.step);
      let set: Record<string, unknown> | undefined;
      try {
        const text = request.body.set?.trim();
        if (text) {
          const parsed: unknown = JSON.parse(text);
          if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
            return back(request, reply, meta.id, 'fork: the state patch must be a JSON object, e.g. {"query": "…"}');
          set = parsed as Record<string, unknown>;
        }
      } catch (error) {
        return back(request, reply, meta.id, `fork: the state patch is not JSON (${(error as Error).message})`);
      }
      try {
        const fork = await client.fork(meta.id, { from, ...(set ? { set } : {}) });
        return back(request, reply, fork.id, `forked from ${meta.id} at step ${from}`);
      } catch (error) {
        return back(request, reply, meta.id, refusal('fork', error));
      }
    },
  );

  scope.post(
    '/runs/:id/replay',
    {
      schema: {
        hide: true,
        params: idParams,
        body: z.object({ graphVersion: z.string().max(128).optional(), continueLive: z.string().optional() }).loose(),
      },
    },
    async (request, reply) => {
      const meta = await ownRun(request, request.params.id);
      if (!meta) return notFoundPage(reply, `run ${request.params.id}`);
      const graphVersion = request.body.graphVersion?.trim();
      try {
        const replay = await client.replay(meta.id, {
          ...(graphVersion ? { graphVersion } : {}),
          ...(request.body.continueLive === 'true' ? { continueLive: true } : {}),
        });
        return back(request, reply, replay.id, `replaying ${meta.id} from its recording`);
      } catch (error) {
        return back(request, reply, meta.id, refusal('replay', error));
      }
    },
  );
}
