import type { AnyGraph } from '../../../shared/graph/graph.js';
import { chainGraph } from './chain.js';
import { multiAgentGraph } from './multi-agent.js';
import { ragAgentGraph } from '../rag/rag-agent.js';
import { reactAgentGraph } from './react-agent.js';
import { reflectGraph } from './reflect.js';

/** The graphs every agentq worker runs unless told otherwise. */
export function builtInGraphs(): AnyGraph[] {
  return [chainGraph, reactAgentGraph, reflectGraph, multiAgentGraph, ragAgentGraph];
}
