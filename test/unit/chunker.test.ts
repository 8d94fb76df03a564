import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkDocument, type Chunk } from '../../worker/ingest/chunker.js';
import { countTokens } from '../../worker/ingest/count-tokens.js';
import type { Block, ParsedDocument } from '../../worker/ingest/parsers/parsed-document.js';
import { parseMarkdown } from '../../worker/ingest/parsers/parse-markdown.js';

const sentence = (index: number) => `Sentence number ${index} tells about the aardvark colony near river ${index % 7}.`;
const paragraph = (from: number, count: number) =>
  Array.from({ length: count }, (_, index) => sentence(from + index)).join(' ');
const doc = (blocks: Block[]): ParsedDocument => ({ type: 'markdown', title: 'T', pages: null, blocks });

/** Invariants every chunking must keep, whatever the document. */
function expectWellFormed(text: string, chunks: Chunk[], maxTokens: number): void {
  chunks.forEach((chunk, index) => {
    expect(chunk.index).toBe(index);
    expect(chunk.text).toBe(text.slice(chunk.charStart, chunk.charEnd));
    expect(chunk.tokens).toBe(countTokens(chunk.text));
    expect(chunk.tokens).toBeLessThanOrEqual(maxTokens);
    expect(chunk.text.trim()).toBe(chunk.text);
    expect(chunk.text.length).toBeGreaterThan(0);
  });
}

describe('chunkDocument', () => {
  it('keeps a short section whole, with its heading path', () => {
    const { text, chunks } = chunkDocument(
      parseMarkdown('# Animals\n\n## Aardvark\n\nThe aardvark digs.\n\nIt eats ants.\n\n## Bee\n\nBees buzz.\n'),
    );
    expect(chunks.map((chunk) => [chunk.headingPath, chunk.text])).toEqual([
      [['Animals', 'Aardvark'], 'The aardvark digs.\n\nIt eats ants.'],
      [['Animals', 'Bee'], 'Bees buzz.'],
    ]);
    expectWellFormed(text, chunks, 400);
  });

  it('pops headings by level: a new ## replaces the previous ## under the same #', () => {
    const { chunks } = chunkDocument(
      parseMarkdown('# A\n\n## B\n\n### C\n\nc text\n\n## D\n\nd text\n\n# E\n\ne text'),
    );
    expect(chunks.map((chunk) => chunk.headingPath)).toEqual([['A', 'B', 'C'], ['A', 'D'], ['E']]);
  });

  it('packs paragraphs up to the budget and never exceeds it', () => {
    const blocks: Block[] = [{ kind: 'heading', level: 1, text: 'Long', page: null }];
    for (let index = 0; index < 30; index += 1)
      blocks.push({ kind: 'paragraph', text: paragraph(index * 3, 3), page: null });
    const { text, chunks } = chunkDocument(doc(blocks), { maxTokens: 120, overlapTokens: 0 });
    expect(chunks.length).toBeGreaterThan(5);
    expectWellFormed(text, chunks, 120);
    // Paragraph boundaries are kept when paragraphs fit: chunks start where paragraphs start.
    for (const chunk of chunks) expect(chunk.text.startsWith('Sentence number')).toBe(true);
    // Nothing lost: every paragraph lies inside some chunk.
    for (const block of blocks.slice(1)) expect(chunks.some((chunk) => chunk.text.includes(block.text))).toBe(true);
  });

  it('splits a paragraph over the budget into sentences, with overlap between its chunks', () => {
    const { text, chunks } = chunkDocument(doc([{ kind: 'paragraph', text: paragraph(0, 60), page: null }]), {
      maxTokens: 100,
      overlapTokens: 30,
    });
    expectWellFormed(text, chunks, 100);
    expect(chunks.length).toBeGreaterThan(5);
    for (let index = 1; index < chunks.length; index += 1) {
      const [previous, current] = [chunks[index - 1]!, chunks[index]!];
      expect(current.charStart).toBeLessThan(previous.charEnd); // overlaps
      expect(current.charStart).toBeGreaterThan(previous.charStart); // and moves on
      expect(countTokens(text.slice(current.charStart, previous.charEnd))).toBeLessThanOrEqual(30);
      expect(current.text).toMatch(/^Sentence number \d+/); // the overlap is whole sentences
    }
  });

  it('cuts a sentence longer than the budget into word windows, and a giant word into pieces', () => {
    const words = Array.from({ length: 900 }, (_, index) => `word${index}`).join(' ');
    const giant = 'x'.repeat(5000);
    const { text, chunks } = chunkDocument(
      doc([
        { kind: 'paragraph', text: words, page: null },
        { kind: 'paragraph', text: giant, page: null },
      ]),
      { maxTokens: 64, overlapTokens: 0 },
    );
    expectWellFormed(text, chunks, 64);
    expect(chunks.map((chunk) => chunk.text).join(' ')).toContain('word899');
    expect(chunks.reduce((sum, chunk) => sum + (chunk.text.match(/x/g)?.length ?? 0), 0)).toBe(5000);
  });

  it('starts a new chunk on a new page, and carries the page', () => {
    const blocks: Block[] = [
      { kind: 'heading', level: 1, text: 'Report', page: 1 },
      { kind: 'paragraph', text: 'Page one text.', page: 1 },
      { kind: 'paragraph', text: 'Page two text.', page: 2 },
      { kind: 'heading', level: 2, text: 'Outlook', page: 2 },
      { kind: 'paragraph', text: 'Still page two.', page: 2 },
    ];
    const { chunks } = chunkDocument({ type: 'pdf', title: 'Report', pages: 2, blocks });
    expect(chunks.map((chunk) => [chunk.page, chunk.headingPath, chunk.text])).toEqual([
      [1, ['Report'], 'Page one text.'],
      [2, ['Report'], 'Page two text.'],
      [2, ['Report', 'Outlook'], 'Still page two.'],
    ]);
  });

  it('indexes a document of headings only by its headings', () => {
    const { chunks } = chunkDocument(doc([{ kind: 'heading', level: 1, text: 'Only a title', page: null }]));
    expect(chunks.map((chunk) => chunk.text)).toEqual(['Only a title']);
  });

  it('is deterministic', () => {
    const document = doc([{ kind: 'paragraph', text: paragraph(0, 40), page: null }]);
    expect(chunkDocument(document, { maxTokens: 90 })).toEqual(chunkDocument(document, { maxTokens: 90 }));
  });

  it('keeps its invariants on arbitrary documents (property)', () => {
    const blockArbitrary = fc.oneof(
      fc.record({
        kind: fc.constant('heading' as const),
        level: fc.integer({ min: 1, max: 4 }),
        text: fc.string({ minLength: 1, maxLength: 40 }).map((value) => value.trim() || 'h'),
        page: fc.constant(null),
      }),
      fc.record({
        kind: fc.constant('paragraph' as const),
        text: fc
          .array(
            fc.oneof(
              fc.lorem({ maxCount: 30, mode: 'sentences' }),
              fc.string({ maxLength: 200 }),
              fc.string({ unit: 'grapheme', maxLength: 80 }),
            ),
            { minLength: 1, maxLength: 4 },
          )
          .map((parts) => parts.join(' ').trim() || 'p'),
        page: fc.constant(null),
      }),
    );
    fc.assert(
      fc.property(
        fc.array(blockArbitrary, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 16, max: 200 }),
        fc.integer({ min: 0, max: 60 }),
        (blocks, maxTokens, overlapTokens) => {
          const { text, chunks } = chunkDocument(doc(blocks), { maxTokens, overlapTokens });
          expectWellFormed(text, chunks, maxTokens);
          // Nothing lost: every non-space character of every paragraph lies inside some chunk (blocks are laid
          // out one after the other, separated by a blank line).
          const covered = new Uint8Array(text.length);
          for (const chunk of chunks) covered.fill(1, chunk.charStart, chunk.charEnd);
          let offset = 0;
          for (const block of blocks) {
            if (block.kind === 'paragraph') {
              for (let index = 0; index < block.text.length; index += 1)
                if (/\S/.test(block.text[index]!)) expect(covered[offset + index]).toBe(1);
            }
            offset += block.text.length + 2;
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
