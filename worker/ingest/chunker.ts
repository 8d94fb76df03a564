import type { ParsedDocument } from './parsers/parsed-document.js';
import { countTokens } from './count-tokens.js';

interface ChunkOptions {
  /** Token budget of one chunk, overlap included (cl100k_base). @default 400 */
  maxTokens?: number;
  /** Tokens a chunk repeats from the end of the previous chunk of the same section. @default 50 */
  overlapTokens?: number;
}

/** One chunk; `text` is exactly `documentText.slice(charStart, charEnd)`. */
export interface Chunk {
  index: number;
  text: string;
  tokens: number;
  /** 1-based page of the chunk's first character, for formats with pages. */
  page: number | null;
  /** Headings above the chunk, outermost first. */
  headingPath: string[];
  charStart: number;
  charEnd: number;
}

interface ChunkedDocument {
  /** The document's extracted text (blocks separated by blank lines); chunk offsets point into it. */
  text: string;
  chunks: Chunk[];
}

interface Span {
  start: number;
  end: number;
}

interface Section {
  headingPath: string[];
  page: number | null;
  paragraphs: Span[];
}

const BLOCK_SEPARATOR = '\n\n';
const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/** Sentences of text[span], trimmed, as spans of the document text. */
function sentences(text: string, span: Span): Span[] {
  const result: Span[] = [];
  for (const { segment, index } of sentenceSegmenter.segment(text.slice(span.start, span.end))) {
    const lead = segment.length - segment.trimStart().length;
    const trimmed = segment.trim();
    if (trimmed) result.push({ start: span.start + index + lead, end: span.start + index + lead + trimmed.length });
  }
  return result;
}

/** A span too long for the budget even as one sentence: windows of whole words (or of characters, for a giant "word"). */
function wordWindows(text: string, span: Span, maxTokens: number): Span[] {
  const words = [...text.slice(span.start, span.end).matchAll(/\S+/g)].map((match) => ({
    start: span.start + match.index,
    end: span.start + match.index + match[0].length,
  }));
  const windows: Span[] = [];
  let index = 0;
  while (index < words.length) {
    let end = index;
    // Grow by whole words while the exact count fits (counts are of short spans: cheap).
    while (end + 1 < words.length && countTokens(text.slice(words[index]!.start, words[end + 1]!.end)) <= maxTokens)
      end += 1;
    const window = { start: words[index]!.start, end: words[end]!.end };
    if (countTokens(text.slice(window.start, window.end)) <= maxTokens) {
      windows.push(window);
    } else {
      // One "word" over the budget (a base64 blob, a URL wall): cut it by characters.
      let start = window.start;
      while (start < window.end) {
        let length = Math.min(window.end - start, maxTokens);
        while (length > 1 && countTokens(text.slice(start, start + length)) > maxTokens)
          length = Math.floor(length * 0.8);
        windows.push({ start, end: start + length });
        start += length;
      }
    }
    index = end + 1;
  }
  return windows;
}

/** Pieces no larger than the budget: a paragraph whole if it fits, else its sentences, else word windows. */
function pieces(text: string, paragraph: Span, maxTokens: number): Span[] {
  if (countTokens(text.slice(paragraph.start, paragraph.end)) <= maxTokens) return [paragraph];
  return sentences(text, paragraph).flatMap((sentence) =>
    countTokens(text.slice(sentence.start, sentence.end)) <= maxTokens
      ? [sentence]
      : wordWindows(text, sentence, maxTokens),
  );
}

/** The document text with each block's span, and its sections (paragraphs under one heading path and page). */
function layout(document: ParsedDocument): { text: string; sections: Section[] } {
  let text = '';
  const sections: Section[] = [];
  const headings: { level: number; text: string }[] = [];
  let section: Section | null = null;
  const append = (blockText: string): Span => {
    if (text) text += BLOCK_SEPARATOR;
    const start = text.length;
    text += blockText;
    return { start, end: text.length };
  };
  // A document of headings only still has text worth finding: then headings are indexed as paragraphs.
  const headingsAsText = !document.blocks.some((block) => block.kind === 'paragraph');
  for (const block of document.blocks) {
    const span = append(block.text);
    if (block.kind === 'heading' && !headingsAsText) {
      while (headings.length > 0 && headings.at(-1)!.level >= block.level) headings.pop();
      headings.push({ level: block.level, text: block.text });
      section = null;
      continue;
    }
    if (!section || section.page !== block.page) {
      section = { headingPath: headings.map((heading) => heading.text), page: block.page, paragraphs: [] };
      sections.push(section);
    }
    section.paragraphs.push(span);
  }
  return { text, sections };
}

/**
 * Splits a parsed document into chunks of at most `maxTokens` tokens (cl100k_base). Structure first:
 * a chunk never spans two sections (a heading, or a page of a PDF, starts a new one), so every chunk
 * has one heading path and one page; within a section whole paragraphs are packed while they fit; a
 * paragraph over the budget is split into sentences, and a sentence over it into windows of words.
 * A chunk after the first of a section starts with up to `overlapTokens` of the previous chunk's last
 * sentences, so a fact cut at a boundary is still found whole. Deterministic: the same document gives
 * the same chunks (chunk ids derive from their index).
 */
export function chunkDocument(
  document: ParsedDocument,
  { maxTokens = 400, overlapTokens = 50 }: ChunkOptions = {},
): ChunkedDocument {
  if (!Number.isInteger(maxTokens) || maxTokens < 8)
    throw new RangeError(`maxTokens must be an integer ≥ 8, got ${maxTokens}`);
  const overlap = Math.max(0, Math.min(overlapTokens, Math.floor(maxTokens / 2)));
  const { text, sections } = layout(document);
  const chunks: Chunk[] = [];

  for (const section of sections) {
    let start: number | null = null;
    let end = 0;
    let tokens = 0;
    const emit = () => {
      if (start === null) return;
      chunks.push({
        index: chunks.length,
        text: text.slice(start, end),
        tokens,
        page: section.page,
        headingPath: section.headingPath,
        charStart: start,
        charEnd: end,
      });
    };
    /** Where the next chunk starts: the earliest sentence start near the end of the last chunk whose tail fits the overlap. */
    const overlapStart = (nextEnd: number): number | null => {
      if (overlap === 0 || start === null) return null;
      let best: number | null = null;
      const tail = sentences(text, { start, end });
      for (let index = tail.length - 1; index >= 0; index -= 1) {
        const candidate = tail[index]!.start;
        if (candidate <= start) break;
        if (countTokens(text.slice(candidate, end)) > overlap) break;
        // The overlap must leave room for the piece that did not fit.
        if (countTokens(text.slice(candidate, nextEnd)) > maxTokens) break;
        best = candidate;
      }
      return best;
    };
    for (const piece of section.paragraphs.flatMap((paragraph) => pieces(text, paragraph, maxTokens))) {
      if (start === null) {
        start = piece.start;
        end = piece.end;
        tokens = countTokens(text.slice(start, end));
        continue;
      }
      const grown = countTokens(text.slice(start, piece.end));
      if (grown <= maxTokens) {
        end = piece.end;
        tokens = grown;
        continue;
      }
      emit();
      const carried = overlapStart(piece.end);
      start = carried ?? piece.start;
      end = piece.end;
      tokens = countTokens(text.slice(start, end));
    }
    emit();
  }
  return { text, chunks };
}
