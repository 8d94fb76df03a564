import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Reading the user docs (README.md and docs/) as tests need them: pages, their fenced blocks with the
 * marker comment before each, their headings' anchors and their links. Tests that run a page's example
 * take it from here by page and first line, so the page stays the one place the example is written.
 */
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** A page's text; `page` is relative to the repository root, e.g. `docs/guides/batch-qa.md`. */
export function readDoc(page: string): string {
  return readFileSync(join(repoRoot, page), 'utf8');
}

/** README.md and every markdown page under docs/, as paths relative to the repository root. */
export function docPages(): string[] {
  const pages = ['README.md'];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) pages.push(relative(repoRoot, path));
    }
  };
  walk(join(repoRoot, 'docs'));
  return pages.sort();
}

export interface FencedBlock {
  language: string;
  body: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The HTML comment on the line before the fence (blank lines skipped), e.g. `illustrative`. */
  marker: string | null;
}

/** The fenced code blocks of a page (``` fences, as the docs use). */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const lines = markdown.split('\n');
  const blocks: FencedBlock[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const open = /^\s*```(\S*)\s*$/.exec(lines[index]!);
    if (!open) continue;
    const indent = /^\s*/.exec(lines[index]!)![0];
    const start = index;
    const body: string[] = [];
    for (index += 1; index < lines.length && lines[index]!.trim() !== '```'; index += 1) {
      body.push(lines[index]!.startsWith(indent) ? lines[index]!.slice(indent.length) : lines[index]!);
    }
    let before = start - 1;
    while (before >= 0 && lines[before]!.trim() === '') before -= 1;
    const marker = before >= 0 ? (/^\s*<!--\s*(.*?)\s*-->\s*$/.exec(lines[before]!)?.[1] ?? null) : null;
    blocks.push({ language: open[1]!, body: `${body.join('\n')}\n`, line: start + 1, marker });
  }
  return blocks;
}

/** The page's fenced block of `language` whose first line starts with `firstLine`. */
export function docSnippet(page: string, language: string, firstLine: string): string {
  const block = fencedBlocks(readDoc(page)).find(
    (candidate) => candidate.language === language && candidate.body.startsWith(firstLine),
  );
  if (!block) throw new Error(`${page} has no \`\`\`${language} block starting with ${firstLine}`);
  return block.body;
}

/** The page's text from the heading `heading` (its text, without #) to the next heading of its level or above. */
export function docSection(page: string, heading: string): string {
  const lines = readDoc(page).split('\n');
  const start = lines.findIndex((line) => /^#{1,6} /.test(line) && line.replace(/^#+ /, '') === heading);
  if (start < 0) throw new Error(`${page} has no heading '${heading}'`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  const end = lines.findIndex((line, index) => index > start && new RegExp(`^#{1,${level}} `).test(line));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** The page without its fenced blocks and inline code, where links and headings are not meant literally. */
function prose(markdown: string): string[] {
  let inFence = false;
  return markdown.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      inFence = !inFence;
      return '';
    }
    return inFence ? '' : line;
  });
}

/** GitHub's anchor for a heading's text (github-slugger): lower case, punctuation dropped, spaces to hyphens. */
export function githubAnchor(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '');
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings, numbered as GitHub numbers repeated ones (`-1`, `-2`). */
export function headingAnchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of prose(markdown)) {
    const heading = /^#{1,6} (.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = githubAnchor(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const [, name] of markdown.matchAll(/<a (?:name|id)="([^"]+)"/g)) anchors.add(name!);
  return anchors;
}

/** The targets of a page's markdown links (`[text](target)`), outside code, with their line. */
export function markdownLinks(markdown: string): { target: string; line: number }[] {
  return prose(markdown).flatMap((line, index) =>
    [...line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => ({
      target: match[1]!,
      line: index + 1,
    })),
  );
}
