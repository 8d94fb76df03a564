/**
 * The soak's chart as hand-written SVG (no canvas here, no dependency): one panel per metric, stacked,
 * sharing the time axis. Each series is one `<polyline data-series="<name>">` with one point per sample,
 * so the chart can be checked by reading the file.
 */
export interface ChartSeries {
  /** Short name, also the `data-series` attribute, e.g. "heap". */
  name: string;
  /** Shown beside the name, e.g. "MB". */
  unit: string;
  /** Samples: seconds since the start, and the value. */
  points: readonly { t: number; value: number }[];
}

const WIDTH = 960;
const PANEL_HEIGHT = 150;
const MARGIN = { left: 70, right: 20, top: 40, gap: 40 };
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];

export function renderSoakChart(title: string, series: readonly ChartSeries[]): string {
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const height = MARGIN.top + series.length * (PANEL_HEIGHT + MARGIN.gap);
  const allTimes = series.flatMap((line) => line.points.map((point) => point.t));
  const tMin = allTimes.length > 0 ? Math.min(...allTimes) : 0;
  const tMax = allTimes.length > 0 ? Math.max(...allTimes) : 1;
  const x = (t: number) => MARGIN.left + (tMax === tMin ? 0 : ((t - tMin) / (tMax - tMin)) * plotWidth);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${MARGIN.left}" y="22" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
  ];
  series.forEach((line, index) => {
    const top = MARGIN.top + index * (PANEL_HEIGHT + MARGIN.gap);
    const values = line.points.map((point) => point.value);
    const vMin = Math.min(0, ...values);
    const vMax = values.length > 0 ? Math.max(...values) : 1;
    const span = vMax === vMin ? 1 : vMax - vMin;
    const y = (value: number) => top + PANEL_HEIGHT - ((value - vMin) / span) * PANEL_HEIGHT;
    const colour = COLOURS[index % COLOURS.length];
    parts.push(
      `<g class="panel">`,
      `<rect x="${MARGIN.left}" y="${top}" width="${plotWidth}" height="${PANEL_HEIGHT}" fill="none" stroke="#ccc"/>`,
      `<text x="${MARGIN.left}" y="${top - 6}" fill="${colour}" font-weight="bold">${escapeXml(`${line.name} (${line.unit})`)}</text>`,
      `<text x="${MARGIN.left - 6}" y="${top + 10}" text-anchor="end">${format(vMax)}</text>`,
      `<text x="${MARGIN.left - 6}" y="${top + PANEL_HEIGHT}" text-anchor="end">${format(vMin)}</text>`,
      `<text x="${MARGIN.left}" y="${top + PANEL_HEIGHT + 14}">${format(tMin / 60)} min</text>`,
      `<text x="${MARGIN.left + plotWidth}" y="${top + PANEL_HEIGHT + 14}" text-anchor="end">${format(tMax / 60)} min</text>`,
      `<polyline data-series="${escapeXml(line.name)}" fill="none" stroke="${colour}" stroke-width="1.2" points="${line.points.map((point) => `${x(point.t).toFixed(1)},${y(point.value).toFixed(1)}`).join(' ')}"/>`,
      `</g>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function format(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(Math.abs(value) >= 10 ? 1 : 2);
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
