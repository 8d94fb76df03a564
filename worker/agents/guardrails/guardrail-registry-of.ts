import type { NodeContext } from '../../../shared/graph/node-context.js';
import { builtInGuardrails } from './built-in-guardrails.js';
import { GuardrailRegistry } from './guardrail-registry.js';

// One registry per services object: built once per worker, not per step.
const registries = new WeakMap<object, GuardrailRegistry>();

/** The built-in guardrails (moderation with a moderator) plus `services.guardrails`. */
export function guardrailRegistryOf(context: Pick<NodeContext, 'services'>): GuardrailRegistry {
  const { services } = context;
  let registry = registries.get(services);
  if (!registry) {
    registry = new GuardrailRegistry([
      ...builtInGuardrails({ moderator: services.moderator }),
      ...(services.guardrails ?? []),
    ]);
    registries.set(services, registry);
  }
  return registry;
}
