import type { NodeContext } from '../../../shared/graph/node-context.js';
import { contextWindowOf } from '../../../shared/llm/context-window.js';
import { languageModelOf, type AgentSettings } from '../agent-services.js';
import type { ReactAgentInput } from '../schemas/react-agent-input.js';

/** The per-run settings a react-agent run carries in its state (from its input). */
export type RunSettings = Pick<
  ReactAgentInput,
  'maxToolRounds' | 'model' | 'temperature' | 'maxOutputTokens' | 'toolHandling' | 'accept'
>;

/** The run's own settings from its input (only those it sets). */
export function runSettingsOf(input: ReactAgentInput): RunSettings {
  const { maxToolRounds, model, temperature, maxOutputTokens, toolHandling, accept } = input;
  return Object.fromEntries(
    Object.entries({ maxToolRounds, model, temperature, maxOutputTokens, toolHandling, accept }).filter(
      ([, value]) => value !== undefined,
    ),
  ) as RunSettings;
}

/** The context window of the model a run calls (its own `model`, else the worker's). */
export function contextWindowFor(context: NodeContext, settings: AgentSettings, run: RunSettings): number {
  return contextWindowOf(
    settings.contextWindows,
    run.model ?? languageModelOf(context).modelId,
    settings.contextWindow,
  );
}
