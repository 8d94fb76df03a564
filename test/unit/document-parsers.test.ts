import { strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { AgentqError } from '../../shared/contracts/errors.js';
import { detectDocumentType } from '../../worker/ingest/parsers/detect-document-type.js';
import { parseDocument } from '../../worker/ingest/parsers/parse-document.js';
import type { ParsedDocument } from '../../worker/ingest/parsers/parsed-document.js';
import {
  BOILERPLATE_HTML,
  DOCX_PARAGRAPHS,
  makeDocx,
  makePdf,
  MARKDOWN,
  PLAIN_TEXT,
} from '../helpers/ingest-fixtures.js';

const headings = (parsed: ParsedDocument) =>
  parsed.blocks
    .filter((block) => block.kind === 'heading')
    .map((block) => `${block.kind === 'heading' ? block.level : ''}:${block.text}`);
const paragraphs = (parsed: ParsedDocument) =>
  parsed.blocks.filter((block) => block.kind === 'paragraph').map((block) => block.text);

async function failure(bytes: Uint8Array, name: string): Promise<AgentqError> {
  const error = await parseDocument(bytes, name).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(AgentqError.isInstance(error), `expected an AgentqError, got ${String(error)}`).toBe(true);
  return error as AgentqError;
}

describe('document type detection', () => {
  it('goes by content, not by the name', () => {
    expect(detectDocumentType(makeDocx(DOCX_PARAGRAPHS), 'memo.txt').type).toBe('docx');
    expect(detectDocumentType(strToU8(BOILERPLATE_HTML), 'page.md').type).toBe('html');
    expect(detectDocumentType(strToU8('%PDF-1.7\n...'), 'report.html').type).toBe('pdf');
    expect(detectDocumentType(strToU8('# Title\n\ntext'), 'notes').type).toBe('markdown');
    expect(detectDocumentType(strToU8('# not markdown by name'), 'notes.txt').type).toBe('text');
    expect(detectDocumentType(strToU8('just words'), 'notes').type).toBe('text');
  });

  it('refuses empty, binary and non-Word ZIP content with a reason', async () => {
    expect((await failure(new Uint8Array(0), 'empty.pdf')).message).toMatch(/empty/);
    const junk = Uint8Array.from({ length: 4096 }, (_, index) => (index * 7919 + 13) % 256);
    expect((await failure(junk, 'junk.md')).code).toBe('UNSUPPORTED_FORMAT');
    const zip = zipSync({ 'readme.txt': strToU8('hello') });
    const notWord = await failure(zip, 'archive.docx');
    expect(notWord.code).toBe('UNSUPPORTED_FORMAT');
    expect(notWord.message).toMatch(/not a Word document/);
  });

  it('reports a parser that throws as a PARSE_ERROR of that document', async () => {
    const brokenPdf = await failure(
      strToU8('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer garbage'),
      'broken.pdf',
    );
    expect(brokenPdf.code).toBe('PARSE_ERROR');
    const brokenDocx = await failure(
      zipSync({ 'word/document.xml': strToU8('this is not xml at all') }),
      'broken.docx',
    );
    expect(brokenDocx.code).toBe('PARSE_ERROR');
  });
});

describe('parsers', () => {
  it('PDF (printed by chromium): text per page, headings from font sizes, title from metadata', async () => {
    const parsed = await parseDocument(makePdf(), 'report.pdf');
    expect(parsed).toMatchObject({ type: 'pdf', title: 'Annual Report 2024', pages: 2 });
    expect(headings(parsed)).toEqual(['1:Annual Report 2024', '2:Outlook']);
    const pageOf = (word: string) => parsed.blocks.find((block) => block.text.includes(word))?.page;
    expect(pageOf('aardvark')).toBe(1);
    expect(pageOf('termite')).toBe(1);
    expect(pageOf('zebra')).toBe(2);
    expect(paragraphs(parsed)).toContain(
      'Revenue of the aardvark division grew by twelve percent in the first quarter.',
    );
  }, 60_000);

  it('DOCX: heading styles, runs joined, page breaks counted, title from core properties', async () => {
    const parsed = await parseDocument(makeDocx(DOCX_PARAGRAPHS), 'memo.docx');
    expect(parsed.title).toBe('Field Memo');
    expect(headings(parsed)).toEqual(['1:Observations', '2:Methods', '1:Recommendations']);
    expect(paragraphs(parsed)).toEqual([
      'Field Memo',
      'The pangolin population near the river doubled this spring.',
      'Camera traps recorded every burrow entrance at night.',
      'Protect the wetland corridor from new roads.',
    ]);
    expect(parsed.blocks.find((block) => block.text.startsWith('Protect'))?.page).toBe(2);
    expect(parsed.blocks.find((block) => block.text.startsWith('Camera'))?.page).toBe(1);
  });

  it('HTML: the main content only, without navigation, header, sidebar, footer, scripts or styles', async () => {
    const parsed = await parseDocument(strToU8(BOILERPLATE_HTML), 'okapi.html');
    expect(parsed.title).toBe('Okapi Facts');
    expect(headings(parsed)).toEqual(['1:Okapi Facts', '2:Diet']);
    const text = parsed.blocks.map((block) => block.text).join('\n');
    for (const boilerplate of ['NAVWORD', 'SIDEWORD', 'FOOTWORD', 'SCRIPTWORD', 'color: red'])
      expect(text).not.toContain(boilerplate);
    expect(paragraphs(parsed)).toEqual([
      'The okapi is a forest giraffe living in the Congo basin.',
      'Okapis eat leaves, buds and fungi. Over 100 plant species are known.',
      'Leaves',
      'Clay for minerals',
    ]);
  });

  it('Markdown: front-matter title, ATX headings, inline marks removed, code fences kept whole', async () => {
    const parsed = await parseDocument(strToU8(MARKDOWN), 'bees.md');
    expect(parsed.title).toBe('Beekeeping Notes');
    expect(headings(parsed)).toEqual(['1:Beekeeping Notes', '2:Spring', '2:Winter']);
    expect(paragraphs(parsed)).toContain('Check the queen and add a super when the colony grows.');
    expect(paragraphs(parsed)).toContain('# not a heading inside code');
  });

  it('plain text: paragraphs at blank lines, no title', async () => {
    const parsed = await parseDocument(strToU8(PLAIN_TEXT), 'lichen.txt');
    expect(parsed).toMatchObject({ type: 'text', title: null });
    expect(paragraphs(parsed)).toEqual(['Lichens grow slowly on granite.', 'They tolerate drought and frost.']);
  });
});
