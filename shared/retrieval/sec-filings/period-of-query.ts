/**
 * Which of a company's reports a question means by its period. "the most recent / latest 10-Q" → the
 * report with the latest period; "Q3 2023", "third quarter of 2023", "2023 Q3" → the report whose
 * period ends within 45 days of that calendar quarter's end (filers name quarters by the calendar
 * quarter their period ends in, give or take a few weeks; fiscal-year labels that differ from it are
 * not recognised). Null when the question names no period or no single report fits.
 */
export function reportForPeriod<T extends { periodEnded?: string | undefined }>(
  query: string,
  reports: readonly T[],
): { report: T; why: string } | null {
  const dated = reports.flatMap((report) => {
    const time = report.periodEnded ? Date.parse(`${report.periodEnded} UTC`) : Number.NaN;
    return Number.isNaN(time) ? [] : [{ report, time }];
  });
  if (dated.length === 0) return null;
  if (
    /\b(?:most recent|latest|last|newest|current)\b/i.test(query) &&
    !/\b(?:last year|last quarter of)\b/i.test(query)
  ) {
    const latest = dated.reduce((best, candidate) => (candidate.time > best.time ? candidate : best));
    return { report: latest.report, why: 'the question asks for the most recent report' };
  }
  const label = quarterLabel(query);
  if (!label) return null;
  const nominal = Date.UTC(label.year, label.quarter * 3, 0);
  const near = dated.filter((candidate) => Math.abs(candidate.time - nominal) <= 45 * 86_400_000);
  if (near.length !== 1) return null;
  return { report: near[0]!.report, why: `the question names Q${label.quarter} ${label.year}` };
}

const ORDINALS: Record<string, number> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  '1st': 1,
  '2nd': 2,
  '3rd': 3,
  '4th': 4,
};

function quarterLabel(query: string): { quarter: number; year: number } | null {
  const short = /\bQ([1-4])\s*(?:of\s+|FY\s*)?'?((?:19|20)\d{2})\b/i.exec(query) ?? null;
  if (short) return { quarter: Number(short[1]), year: Number(short[2]) };
  const reversed = /\b((?:19|20)\d{2})\s*Q([1-4])\b/i.exec(query);
  if (reversed) return { quarter: Number(reversed[2]), year: Number(reversed[1]) };
  const words =
    /\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter\s+(?:of\s+)?(?:fiscal\s+(?:year\s+)?)?((?:19|20)\d{2})\b/i.exec(
      query,
    );
  if (words) return { quarter: ORDINALS[words[1]!.toLowerCase()]!, year: Number(words[2]) };
  return null;
}
