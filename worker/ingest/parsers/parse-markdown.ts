import { collapseWhitespace, type Block, type ParsedDocument } from './parsed-document.js';

/** Inline Markdown reduced to its words: images and links to their text, emphasis and code marks dropped. */
function plainInline(text: string): string {
  return collapseWhitespace(
    text
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
      .replace(/<\/?[A-Za-z][^>]*>/g, ' ')
      .replace(/(\*\*|__|~~)(?=\S)([\s\S]*?\S)\1/g, '$2')
      .replace(/(^|[^\w*])[*_](?=\S)([^*_]*?\S)[*_](?!\w)/g, '$1$2')
      .replace(/`+([^`]+)`+/g, '$1'),
  );
}

/**
 * Markdown → headings (ATX `#` and setext underlines) and paragraphs (blank-line separated; list items
 * and block quotes as they stand; fenced code blocks kept whole, their `#` lines are not headings).
 * YAML front matter is skipped, its `title:` used as the title.
 */
export function parseMarkdown(source: string): ParsedDocument {
  let text = source.replace(/\r\n?/g, '\n');
  let title: string | null = null;
  const frontMatter = /^---\n([\s\S]*?)\n(---|\.\.\.)\n/.exec(text);
  if (frontMatter) {
    title = /^title:\s*["']?(.+?)["']?\s*$/m.exec(frontMatter[1]!)?.[1] ?? null;
    text = text.slice(frontMatter[0].length);
  }
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  let fence: string | null = null;
  const flush = () => {
    const joined = fence === null ? plainInline(paragraph.join('\n')) : paragraph.join('\n').trim();
    if (joined) blocks.push({ kind: 'paragraph', text: joined, page: null });
    paragraph = [];
  };
  for (const line of text.split('\n')) {
    if (fence !== null) {
      if (line.trimStart().startsWith(fence)) {
        flush();
        fence = null;
      } else {
        paragraph.push(line);
      }
      continue;
    }
    const opening = /^\s{0,3}(```+|~~~+)/.exec(line);
    if (opening) {
      flush();
      fence = opening[1]!;
      continue;
    }
    const atx = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx) {
      flush();
      const heading = plainInline(atx[2]!);
      if (heading) blocks.push({ kind: 'heading', level: atx[1]!.length, text: heading, page: null });
      continue;
    }
    const setext = /^\s{0,3}(=+|-+)\s*$/.exec(line);
    if (setext && paragraph.length === 1 && paragraph[0]!.trim()) {
      const heading = plainInline(paragraph[0]!);
      paragraph = [];
      blocks.push({ kind: 'heading', level: setext[1]!.startsWith('=') ? 1 : 2, text: heading, page: null });
      continue;
    }
    if (!line.trim()) flush();
    else paragraph.push(line);
  }
  flush();
  title ??= blocks.find((block) => block.kind === 'heading')?.text ?? null;
  return { type: 'markdown', title, pages: null, blocks };
}
