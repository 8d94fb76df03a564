import { describe, expect, it } from 'vitest';
import { renderSoakChart, type ChartSeries } from '../../bench/lib/soak-chart.js';

/** `data-series` name → the points of its polyline, as [x, y] pairs. */
function polylines(svg: string): Map<string, [number, number][]> {
  const found = new Map<string, [number, number][]>();
  for (const match of svg.matchAll(/<polyline data-series="([^"]+)"[^>]* points="([^"]*)"/g)) {
    const points =
      match[2]!.trim() === ''
        ? []
        : match[2]!
            .trim()
            .split(/\s+/)
            .map((pair) => pair.split(',').map(Number) as [number, number]);
    expect(found.has(match[1]!), `series ${match[1]} drawn twice`).toBe(false);
    found.set(match[1]!, points);
  }
  return found;
}

const ramp = (count: number, value: (t: number) => number) =>
  Array.from({ length: count }, (_, index) => ({ t: index + 1, value: value(index + 1) }));

describe('soak chart (bench/lib/soak-chart.ts)', () => {
  const series: ChartSeries[] = [
    { name: 'heap', unit: 'MB', points: ramp(120, (t) => 40 + (t % 7)) },
    { name: 'rss', unit: 'MB', points: ramp(120, (t) => 180 + t) },
    { name: 'redis', unit: 'MB', points: ramp(120, () => 1.5) },
    // Latency has a point only for seconds in which a run finished.
    { name: 'latency', unit: 'ms', points: ramp(120, (t) => 300 + t).filter((point) => point.t % 3 !== 0) },
  ];
  const svg = renderSoakChart('soak <test> & "quotes"', series);

  it('draws one series per metric with one point per sample', () => {
    const lines = polylines(svg);
    expect([...lines.keys()]).toEqual(['heap', 'rss', 'redis', 'latency']);
    for (const line of series) expect(lines.get(line.name)).toHaveLength(line.points.length);
  });

  it('keeps every point inside the picture, in time order, higher values higher up', () => {
    const [, width, height] = /viewBox="0 0 (\d+) (\d+)"/.exec(svg)!.map(Number);
    const rss = polylines(svg).get('rss')!;
    for (const [x, y] of [...polylines(svg).values()].flat()) {
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThanOrEqual(width!);
      expect(y).toBeGreaterThanOrEqual(0);
      expect(y).toBeLessThanOrEqual(height!);
    }
    // rss only grows: x increases and y (SVG grows downwards) decreases along the line.
    for (let index = 1; index < rss.length; index += 1) {
      expect(rss[index]![0]).toBeGreaterThan(rss[index - 1]![0]);
      expect(rss[index]![1]).toBeLessThan(rss[index - 1]![1]);
    }
  });

  it('is well-formed SVG with the title escaped', () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(svg).not.toContain('<test>');
    expect(svg).toContain('soak &#60;test&#62; &#38; &#34;quotes&#34;');
  });
});
