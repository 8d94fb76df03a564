/**
 * A grouped horizontal bar chart as hand-written SVG (no canvas here, no dependency), for the figures
 * of docs/benchmarks.md and docs/evaluation.md. Each bar is a `<rect data-series data-value>`, so a
 * test (and a reader of the file) can check what was drawn against the results it was drawn from.
 */
export interface BarGroup {
  /** The group's label, left of its bars, e.g. "100 runs in flight". */
  label: string;
  /** One value per series, in the order of `BarChart.series`; `undefined` leaves the bar out. */
  values: readonly (number | undefined)[];
}

export interface BarChart {
  title: string;
  /** Below the title: what was measured, with the command (a figure never goes without it). */
  subtitle: string;
  /** The value axis, e.g. "steps/s" or "µs of CPU per step". */
  unit: string;
  series: readonly string[];
  groups: readonly BarGroup[];
  /** A line across the bars at this value, e.g. a goal. */
  marker?: { value: number; label: string };
  /** The end of the value axis (e.g. 100 for percentages). @default the largest value or marker */
  max?: number;
}

const WIDTH = 880;
const LEFT = 210;
const RIGHT = 90;
const TOP = 72;
const BAR = 18;
const BAR_GAP = 4;
const GROUP_GAP = 16;
const COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b'];

export function renderBarChart(input: BarChart): string {
  // A series without a single value (a figure this run did not measure) gets neither bars nor a legend entry.
  const kept = input.series.flatMap((_name, index) =>
    input.groups.some((group) => group.values[index] !== undefined) ? [index] : [],
  );
  const chart: BarChart = {
    ...input,
    series: kept.map((index) => input.series[index]!),
    groups: input.groups.map((group) => ({ ...group, values: kept.map((index) => group.values[index]) })),
  };
  const barsPerGroup = chart.series.length;
  const groupHeight = barsPerGroup * (BAR + BAR_GAP) - BAR_GAP;
  const plotHeight = chart.groups.length * (groupHeight + GROUP_GAP) - GROUP_GAP;
  const legendTop = TOP + plotHeight + 34;
  const height = legendTop + 24;
  const plotWidth = WIDTH - LEFT - RIGHT;
  const values = chart.groups.flatMap((group) => group.values.filter((value) => value !== undefined));
  const max = chart.max ?? Math.max(...values, chart.marker?.value ?? 0, Number.MIN_VALUE);
  const x = (value: number) => LEFT + (value / max) * plotWidth;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="16" y="24" font-size="15" font-weight="bold">${escapeXml(chart.title)}</text>`,
    `<text x="16" y="44" fill="#555">${escapeXml(chart.subtitle)}</text>`,
    `<line x1="${LEFT}" y1="${TOP - 6}" x2="${LEFT}" y2="${TOP + plotHeight + 6}" stroke="#999"/>`,
    `<text x="${LEFT}" y="${TOP + plotHeight + 20}" fill="#555">0</text>`,
    `<text x="${LEFT + plotWidth}" y="${TOP + plotHeight + 20}" text-anchor="end" fill="#555">${escapeXml(`${format(max)} ${chart.unit}`)}</text>`,
  ];
  chart.groups.forEach((group, groupIndex) => {
    const top = TOP + groupIndex * (groupHeight + GROUP_GAP);
    parts.push(
      `<text x="${LEFT - 10}" y="${top + groupHeight / 2 + 4}" text-anchor="end">${escapeXml(group.label)}</text>`,
    );
    group.values.forEach((value, seriesIndex) => {
      if (value === undefined) return;
      const y = top + seriesIndex * (BAR + BAR_GAP);
      const name = chart.series[seriesIndex] ?? `series ${seriesIndex + 1}`;
      parts.push(
        `<rect data-series="${escapeXml(name)}" data-value="${value}" x="${LEFT}" y="${y}" width="${(x(value) - LEFT).toFixed(1)}" height="${BAR}" fill="${COLOURS[seriesIndex % COLOURS.length]}"/>`,
        `<text x="${(x(value) + 6).toFixed(1)}" y="${y + BAR - 5}">${escapeXml(format(value))}</text>`,
      );
    });
  });
  if (chart.marker) {
    const markerX = x(chart.marker.value).toFixed(1);
    parts.push(
      `<line x1="${markerX}" y1="${TOP - 10}" x2="${markerX}" y2="${TOP + plotHeight + 6}" stroke="#d62728" stroke-dasharray="4 3"/>`,
      `<text x="${markerX}" y="${TOP - 14}" text-anchor="middle" fill="#d62728">${escapeXml(chart.marker.label)}</text>`,
    );
  }
  let legendX = 16;
  chart.series.forEach((name, index) => {
    parts.push(
      `<rect x="${legendX}" y="${legendTop - 10}" width="12" height="12" fill="${COLOURS[index % COLOURS.length]}"/>`,
      `<text x="${legendX + 18}" y="${legendTop}">${escapeXml(name)}</text>`,
    );
    legendX += 30 + name.length * 7;
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function format(value: number): string {
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  return value.toFixed(Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2);
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
