import type { BenchFigures } from './bench-section.js';
import { round } from './stats.js';

/** Collects a section's figures, rounded, and logs each as it is measured. */
export function figureRecorder(log: (line: string) => void): {
  figures: BenchFigures;
  record(name: string, value: number): number;
} {
  const figures: BenchFigures = {};
  return {
    figures,
    record(name, value) {
      figures[name] = round(value);
      log(`  ${name}=${figures[name]}`);
      return figures[name];
    },
  };
}
