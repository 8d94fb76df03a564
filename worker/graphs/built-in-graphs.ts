import type { AnyGraph } from '../../shared/graph/graph.js';
import { chainGraph } from './chain.js';

/** The graphs every agentq worker runs unless told otherwise. */
export function builtInGraphs(): AnyGraph[] {
  return [chainGraph];
}
