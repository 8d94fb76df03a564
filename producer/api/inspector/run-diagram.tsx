/** The nodes of one superstep, in task order. */
export type Path = readonly (readonly string[])[];

interface Edge {
  from: string;
  to: string;
}

const START = '__start__';
const END = '__end__';

function edgesOf(path: Path): Edge[] {
  const edges: Edge[] = [];
  const stops = [[START], ...path, [END]];
  for (let index = 1; index < stops.length; index += 1) {
    for (const from of stops[index - 1]!) for (const to of stops[index]!) edges.push({ from, to });
  }
  return edges;
}

/**
 * The graph as an SVG diagram, with the path of this run highlighted. Graph edges are functions in
 * the worker (routers), so the API draws what runs of the graph have taken: the union of `others`
 * (recent runs of the same graph) and this run; an edge or node this run used is drawn bold and blue.
 * Nodes are placed left to right by the superstep where they first appear.
 */
export function RunDiagram({ path, others = [] }: { path: Path; others?: readonly Path[] }) {
  const column = new Map<string, number>([[START, 0]]);
  const place = (candidate: Path) =>
    candidate.forEach((nodes, index) => {
      for (const node of nodes) if (!column.has(node) || column.get(node)! > index + 1) column.set(node, index + 1);
    });
  place(path);
  for (const other of others) place(other);
  const lastColumn = Math.max(0, ...column.values()) + 1;
  column.set(END, lastColumn);
  const rows = new Map<number, string[]>();
  for (const [node, at] of column) rows.set(at, [...(rows.get(at) ?? []), node]);
  const width = 150;
  const height = 56;
  const position = new Map<string, { x: number; y: number }>();
  let maxRows = 1;
  for (const [at, nodes] of rows) {
    maxRows = Math.max(maxRows, nodes.length);
    nodes.forEach((node, index) => position.set(node, { x: 20 + at * width, y: 20 + index * height }));
  }
  const used = new Set(edgesOf(path).map((edge) => `${edge.from}>${edge.to}`));
  const visits = new Map<string, number>();
  for (const nodes of path) for (const node of nodes) visits.set(node, (visits.get(node) ?? 0) + 1);
  const all = new Map<string, Edge>();
  for (const candidate of [path, ...others])
    for (const edge of edgesOf(candidate)) all.set(`${edge.from}>${edge.to}`, edge);
  const boxWidth = 110;
  const boxHeight = 30;
  const edges = [...all.entries()].map(([key, { from, to }]) => {
    const a = position.get(from)!;
    const b = position.get(to)!;
    const on = used.has(key);
    const look = {
      class: on ? 'edge edge-taken' : 'edge',
      stroke: on ? '#2f6fde' : '#b7c0cc',
      'stroke-width': on ? 2.5 : 1.2,
      'marker-end': `url(#arrow${on ? '-on' : ''})`,
    };
    if (from === to || b.x <= a.x) {
      // A loop back (a node revisited later): an arc above the boxes.
      const x1 = a.x + boxWidth / 2;
      const x2 = b.x + boxWidth / 2;
      const top = Math.min(a.y, b.y) - 14;
      return <path {...look} d={`M${x1},${a.y} C${x1},${top - 20} ${x2},${top - 20} ${x2},${b.y}`} fill="none" />;
    }
    return <line {...look} x1={a.x + boxWidth} y1={a.y + boxHeight / 2} x2={b.x - 4} y2={b.y + boxHeight / 2} />;
  });
  const nodes = [...position.entries()].map(([node, { x, y }]) => {
    const terminal = node === START || node === END;
    const count = visits.get(node) ?? 0;
    const on = terminal || count > 0;
    const label = node === START ? 'start' : node === END ? 'end' : node;
    return (
      <g class={on ? 'node node-taken' : 'node'} data-node={node}>
        <rect
          x={x}
          y={y}
          width={boxWidth}
          height={boxHeight}
          rx={terminal ? 15 : 5}
          fill={on ? '#e3edff' : '#fff'}
          stroke={on ? '#2f6fde' : '#b7c0cc'}
          stroke-width={on ? 2 : 1}
        />
        <text x={x + boxWidth / 2} y={y + 19} text-anchor="middle" font-size="12">
          {`${label.length > 16 ? `${label.slice(0, 15)}…` : label}${count > 1 ? ` ×${count}` : ''}`}
        </text>
      </g>
    );
  });
  const svgWidth = 40 + (lastColumn + 1) * width;
  const svgHeight = 50 + maxRows * height;
  return (
    <svg
      class="diagram"
      role="img"
      aria-label="graph diagram"
      width={svgWidth}
      height={svgHeight}
      viewBox={`0 -30 ${svgWidth} ${svgHeight}`}
    >
      <defs>
        {[
          ['arrow', '#b7c0cc'],
          ['arrow-on', '#2f6fde'],
        ].map(([id, fill]) => (
          <marker id={id} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto">
            <path d="M0,0 L10,5 L0,10 z" fill={fill} />
          </marker>
        ))}
      </defs>
      {edges}
      {nodes}
    </svg>
  );
}
