import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import type { AnyGuardrail, GuardrailStage } from './define-guardrail.js';
import { specName, type GuardrailPlan, type GuardrailSpec } from '../../../shared/contracts/guardrail-spec.js';

/** A guardrail ready to run at one stage: the guardrail and its validated options. */
export interface BoundGuardrail {
  guardrail: AnyGuardrail;
  options: unknown;
}

/** The guardrails a worker offers to graphs and runs, by name. */
export class GuardrailRegistry {
  private readonly guardrails = new Map<string, AnyGuardrail>();

  constructor(guardrails: readonly AnyGuardrail[] = []) {
    for (const guardrail of guardrails) this.register(guardrail);
  }

  /** Adds a guardrail; a second one with the same name is an error (a custom one cannot silently replace a built-in). */
  register(guardrail: AnyGuardrail): this {
    if (this.guardrails.has(guardrail.name)) {
      throw new AgentqError(
        'INVALID_INPUT',
        `guardrail '${guardrail.name}' is registered twice; guardrail names must be unique`,
      );
    }
    this.guardrails.set(guardrail.name, guardrail);
    return this;
  }

  names(): string[] {
    return [...this.guardrails.keys()];
  }

  /**
   * Every guardrail of a plan, found and its options validated — an unknown name, options its schema
   * refuses or a guardrail at a stage it does not support is the run's input error, naming the field.
   */
  bind(plan: GuardrailPlan): Record<GuardrailStage, BoundGuardrail[]> {
    return { input: this.bindStage('input', plan.input), output: this.bindStage('output', plan.output) };
  }

  private bindStage(stage: GuardrailStage, specs: readonly GuardrailSpec[]): BoundGuardrail[] {
    return specs.map((spec, index) => {
      const field = `guardrails.${stage}[${index}]`;
      const name = specName(spec);
      const guardrail = this.guardrails.get(name);
      if (!guardrail) {
        const hint = name === 'moderation' ? ' (moderation needs MODERATION_MODEL on the worker)' : '';
        throw new AgentqError(
          'INVALID_INPUT',
          `${field}: unknown guardrail '${name}'${hint}; this worker has: ${this.names().join(', ') || 'none'}`,
        );
      }
      if (!guardrail.stages.includes(stage)) {
        throw new AgentqError(
          'INVALID_INPUT',
          `${field}: guardrail '${name}' runs only at ${guardrail.stages.join(' and ')}, not at ${stage}`,
        );
      }
      const parsed = guardrail.options.safeParse(typeof spec === 'string' ? {} : (spec.options ?? {}));
      if (!parsed.success) {
        throw new AgentqError(
          'INVALID_INPUT',
          `${field}.options: invalid options for guardrail '${name}':\n${z.prettifyError(parsed.error)}`,
        );
      }
      return { guardrail, options: parsed.data };
    });
  }
}
