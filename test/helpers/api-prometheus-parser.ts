/**
 * A strict parser of the Prometheus text exposition format 0.0.4, for tests: it throws on anything a
 * Prometheus server would reject (bad names, bad escapes, bad numbers, a TYPE after samples, duplicate
 * series, a family split in two) and checks histograms (cumulative buckets, `+Inf` equal to `_count`).
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string | undefined;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(text: string, line: number): number {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`line ${line}: '${text}' is not a number`);
  return Number(text);
}

function parseLabels(text: string, line: number): Record<string, string> {
  const labels: Record<string, string> = {};
  let position = 0;
  while (position < text.length) {
    const equals = text.indexOf('=', position);
    if (equals < 0) throw new Error(`line ${line}: label without '=' in {${text}}`);
    const name = text.slice(position, equals).trim();
    if (!LABEL_NAME.test(name)) throw new Error(`line ${line}: bad label name '${name}'`);
    if (text[equals + 1] !== '"') throw new Error(`line ${line}: label ${name} value is not quoted`);
    let value = '';
    let index = equals + 2;
    for (; ; index += 1) {
      const character = text[index];
      if (character === undefined) throw new Error(`line ${line}: unterminated value of label ${name}`);
      if (character === '"') break;
      if (character === '\\') {
        const next = text[index + 1];
        if (next === '\\') value += '\\';
        else if (next === '"') value += '"';
        else if (next === 'n') value += '\n';
        else throw new Error(`line ${line}: bad escape '\\${next ?? ''}' in label ${name}`);
        index += 1;
      } else {
        value += character;
      }
    }
    if (name in labels) throw new Error(`line ${line}: label ${name} twice`);
    labels[name] = value;
    position = index + 1;
    if (text[position] === ',') position += 1;
    else if (position < text.length) throw new Error(`line ${line}: expected ',' after label ${name}`);
  }
  return labels;
}

function familyOf(sampleName: string, families: Map<string, Family>): Family | undefined {
  if (families.has(sampleName)) return families.get(sampleName);
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (sampleName.endsWith(suffix)) {
      const family = families.get(sampleName.slice(0, -suffix.length));
      if (family && (family.type === 'histogram' || family.type === 'summary')) return family;
    }
  }
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  const series = new Set<string>();
  let current: Family | undefined;
  text
    .slice(0, -1)
    .split('\n')
    .forEach((raw, index) => {
      const line = index + 1;
      if (raw.trim() === '') return;
      const meta = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(raw);
      if (meta) {
        const [, kind, name, rest = ''] = meta as unknown as [string, 'HELP' | 'TYPE', string, string | undefined];
        if (!METRIC_NAME.test(name)) throw new Error(`line ${line}: bad metric name '${name}'`);
        if (closed.has(name)) throw new Error(`line ${line}: ${kind} for ${name} after its samples ended`);
        let family = families.get(name);
        if (!family) {
          family = { name, type: 'untyped', help: undefined, samples: [] };
          families.set(name, family);
        }
        if (family.samples.length > 0) throw new Error(`line ${line}: ${kind} for ${name} after its samples`);
        if (kind === 'TYPE') {
          if (!TYPES.has(rest.trim())) throw new Error(`line ${line}: unknown type '${rest}'`);
          family.type = rest.trim() as Family['type'];
        } else {
          if (family.help !== undefined) throw new Error(`line ${line}: second HELP for ${name}`);
          family.help = rest;
        }
        if (current && current !== family) closed.add(current.name);
        current = family;
        return;
      }
      if (raw.startsWith('#')) return;
      const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?$/.exec(raw);
      if (!sample) throw new Error(`line ${line}: not a sample: ${raw}`);
      const [, name, labelText = '', valueText] = sample as unknown as [string, string, string | undefined, string];
      const labels = parseLabels(labelText, line);
      const value = parseValue(valueText, line);
      const family = familyOf(name, families) ?? { name, type: 'untyped' as const, help: undefined, samples: [] };
      if (!families.has(family.name)) families.set(family.name, family);
      if (closed.has(family.name)) throw new Error(`line ${line}: samples of ${family.name} are split`);
      if (current && current !== family) closed.add(current.name);
      current = family;
      const id = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
      if (series.has(id)) throw new Error(`line ${line}: duplicate series ${raw}`);
      series.add(id);
      if (family.type === 'counter' && !(value >= 0)) throw new Error(`line ${line}: counter ${name} is ${valueText}`);
      family.samples.push({ name, labels, value });
    });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; sum?: number; count?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const group = groups.get(key) ?? { buckets: [] };
    groups.set(key, group);
    if (sample.name === `${family.name}_bucket`) {
      if (le === undefined) throw new Error(`${family.name}: bucket without le`);
      group.buckets.push([parseValue(le, 0), sample.value]);
    } else if (sample.name === `${family.name}_sum`) group.sum = sample.value;
    else if (sample.name === `${family.name}_count`) group.count = sample.value;
    else throw new Error(`${family.name}: unexpected sample ${sample.name}`);
  }
  for (const [key, group] of groups) {
    const bounds = group.buckets.map(([bound]) => bound);
    if (bounds.at(-1) !== Infinity) throw new Error(`${family.name}${key}: no le="+Inf" bucket last`);
    for (let index = 1; index < group.buckets.length; index += 1) {
      const [bound, count] = group.buckets[index]!;
      const [previousBound, previousCount] = group.buckets[index - 1]!;
      if (!(bound > previousBound)) throw new Error(`${family.name}${key}: buckets not in increasing le order`);
      if (count < previousCount) throw new Error(`${family.name}${key}: bucket counts are not cumulative`);
    }
    if (group.count === undefined || group.sum === undefined)
      throw new Error(`${family.name}${key}: _sum or _count missing`);
    if (group.buckets.at(-1)![1] !== group.count)
      throw new Error(`${family.name}${key}: +Inf bucket differs from _count`);
  }
}
