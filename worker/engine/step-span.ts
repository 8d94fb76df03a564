import { context as otelContext, SpanStatusCode, trace } from '@opentelemetry/api';
import { DelayedError, type Job } from 'bullmq';
import type { StepJobData } from '../../shared/contracts/job-schema.js';
import type { StepMeta } from '../../shared/store/redis-run-store.js';
import type { Telemetry } from '../../shared/telemetry/telemetry.js';
import type { StepOutcome } from './step-processor-options.js';

/** The step inside its span `agent.step <node>`, a child of the run's root span (docs/guides/observability.md). */
export function inStepSpan(
  telemetry: Telemetry,
  job: Job<StepJobData>,
  nodeName: string,
  meta: StepMeta,
  attempt: number,
  runStep: () => Promise<StepOutcome>,
): Promise<StepOutcome> {
  const parent = telemetry.runContext(meta.trace);
  const span = telemetry.tracer.startSpan(
    `agent.step ${nodeName}`,
    {
      attributes: {
        'agentq.run.id': meta.id,
        'agentq.graph': `${meta.graph}@${meta.graphVersion ?? ''}`,
        'agentq.step.superstep': job.data.superstep,
        'agentq.step.task': job.data.task,
        'agentq.step.node': nodeName,
        'agentq.step.attempt': attempt,
      },
    },
    parent,
  );
  return otelContext.with(trace.setSpan(parent, span), async () => {
    try {
      const outcome = await runStep();
      span.setAttribute('agentq.step.outcome', outcome);
      return outcome;
    } catch (error) {
      if (!(error instanceof DelayedError)) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      }
      throw error;
    } finally {
      span.end();
    }
  });
}
