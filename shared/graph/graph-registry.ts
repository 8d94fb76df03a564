import { AgentqError } from '../contracts/errors.js';
import type { AnyGraph, Graph } from './graph.js';

/** Graphs a worker can run, by `name@version`. A name without a version means its latest registration. */
export class GraphRegistry {
  private readonly byId = new Map<string, Graph>();
  private readonly latest = new Map<string, Graph>();

  constructor(graphs: Iterable<AnyGraph> = []) {
    for (const graph of graphs) this.register(graph);
  }

  register(graph: AnyGraph): this {
    if (this.byId.has(graph.id)) throw new AgentqError('INVALID_GRAPH', `graph ${graph.id} is registered twice`);
    this.byId.set(graph.id, graph as Graph);
    this.latest.set(graph.name, graph as Graph);
    return this;
  }

  hasName(name: string): boolean {
    return this.latest.has(name);
  }

  /** The graph, or undefined when this worker does not have that name or version. */
  find(name: string, version?: string | null): Graph | undefined {
    return version ? this.byId.get(`${name}@${version}`) : this.latest.get(name);
  }

  names(): string[] {
    return [...this.latest.keys()];
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }
}
