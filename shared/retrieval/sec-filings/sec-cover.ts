/** What the cover page of an SEC filing says the document is. */
interface SecCover {
  /** The registrant, e.g. "Amazon.com, Inc.". */
  company: string;
  /** e.g. "10-Q", "10-K". */
  form: string;
  /** The period the report covers, as the cover says it, e.g. "March 31, 2022"; null when not found. */
  periodEnded: string | null;
  /** "Amazon.com, Inc. — Form 10-Q — quarter ended March 31, 2022". */
  title: string;
}

const FORM = /\bFORM\s+(10-Q|10-K|8-K|20-F|6-K|40-F|S-1|DEF 14A)\b/i;
const PERIOD =
  /for the (quarterly period|fiscal year|quarter|year|period) ended:?\s+([A-Z][a-z]+\.?\s+\d{1,2},?\s+\d{4})/i;
const REGISTRANT = /\(?\s*exact name of registrant/i;
/** Lines between the company's name and the "(Exact name …)" caption that are not the name. */
/** A line that is only a company's name: "MICROSOFT CORPORATION", "Apple Inc.". */
const COMPANY_LINE =
  /^[\p{L}\d][\p{L}\d.,&'’ -]{1,80}\b(?:inc\.?|incorporated|corporation|corp\.?|company|co\.|ltd\.?|limited|llc|plc|n\.v\.|s\.a\.|ag|se|holdings|group)$/iu;
const NOT_A_NAME = /^[_\s-]*$|commission file|^\(?mark one|^or$|^transition report|^\d/i;

/** "AMAZON.COM, INC." → "Amazon.com, Inc.": an all-capitals name reads as a name, not as shouting. */
function companyCase(name: string): string {
  if (/\p{Ll}/u.test(name)) return name;
  return name
    .toLowerCase()
    .replace(/(^|[\s(&-])(\p{L})/gu, (_match, lead: string, letter: string) => lead + letter.toUpperCase());
}

/**
 * Reads an SEC filing's cover page (the first page's lines, in order): the form ("FORM 10-Q"), the
 * period ("For the quarterly period ended March 31, 2022") and the registrant (the line above "(Exact
 * name of registrant as specified in its charter)"). Null when the lines are not such a cover, so any
 * other document keeps the title its own headings give it.
 */
export function readSecCover(lines: readonly string[]): SecCover | null {
  const text = lines.join('\n');
  const form = FORM.exec(text)?.[1]?.toUpperCase();
  if (!form) return null;
  const registrant = lines.findIndex((line) => REGISTRANT.test(line));
  // Without the caption, the first line that is only a company's name (some filers leave the caption out).
  let company =
    registrant < 0
      ? (lines.find((line) => COMPANY_LINE.test(line.trim()))?.trim() ?? '')
      : lines[registrant]!.split(REGISTRANT)[0]!.trim();
  for (let index = registrant - 1; registrant >= 0 && !company && index >= 0 && index >= registrant - 4; index -= 1) {
    const candidate = lines[index]!.replace(/_{3,}/g, ' ').trim();
    if (!NOT_A_NAME.test(candidate) && /\p{L}{2}/u.test(candidate) && candidate.length <= 120) company = candidate;
  }
  company = companyCase(company.replace(/_{3,}/g, ' ').replace(/\s+/g, ' ').trim());
  if (!company) return null;
  const period = PERIOD.exec(text.replace(/\s+/g, ' '));
  const periodEnded = period ? period[2]!.replace(/\s+/g, ' ') : null;
  const span = !period
    ? ''
    : /year/i.test(period[1]!)
      ? ` — fiscal year ended ${periodEnded}`
      : /quarter/i.test(period[1]!) || form === '10-Q'
        ? ` — quarter ended ${periodEnded}`
        : ` — period ended ${periodEnded}`;
  return { company, form, periodEnded, title: `${company} — Form ${form}${span}` };
}
