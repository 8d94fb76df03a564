import { strFromU8, unzipSync } from 'fflate';
import { parseError } from './document-parse-error.js';
import { collapseWhitespace, type Block, type ParsedDocument } from './parsed-document.js';
import { attribute, decodeXmlEntities } from './xml-text.js';

/** A part larger than this once inflated is refused (a ZIP bomb would otherwise take the thread's memory). */
const MAX_PART_BYTES = 200 * 1024 * 1024;
const PARTS = ['word/document.xml', 'word/styles.xml', 'docProps/core.xml'];
/** Level given to the Title style: above every heading. */
const TITLE_LEVEL = 0;

/** Heading level by paragraph style id, from styles.xml ("heading 2" → 2, outline level 1 → 2, Title → 0). */
function headingStyles(stylesXml: string | undefined): Map<string, number> {
  const levels = new Map<string, number>();
  for (const match of (stylesXml ?? '').matchAll(/<w:style\b([^>]*)>([\s\S]*?)<\/w:style>/g)) {
    const styleId = attribute(match[1]!, 'w:styleId');
    if (!styleId) continue;
    const name = attribute(/<w:name\b([^>]*)\/?>/.exec(match[2]!)?.[1] ?? '', 'w:val') ?? '';
    const outline = attribute(/<w:outlineLvl\b([^>]*)\/?>/.exec(match[2]!)?.[1] ?? '', 'w:val');
    const named = /^heading\s*(\d)$/i.exec(name);
    if (named) levels.set(styleId, Number(named[1]));
    else if (/^title$/i.test(name)) levels.set(styleId, TITLE_LEVEL);
    else if (outline !== undefined && Number(outline) < 9) levels.set(styleId, Number(outline) + 1);
  }
  return levels;
}

/** Without styles.xml: Word's built-in style ids. */
function builtInLevel(styleId: string): number | undefined {
  const heading = /^heading(\d)$/i.exec(styleId);
  if (heading) return Number(heading[1]);
  return /^title$/i.test(styleId) ? TITLE_LEVEL : undefined;
}

interface Paragraph {
  text: string;
  styleId: string | undefined;
  outlineLevel: number | undefined;
  page: number;
}

/**
 * DOCX → paragraphs and headings, read straight from `word/document.xml` (fflate inflates only the
 * parts needed). Headings come from paragraph styles (Heading 1-9, Title, outline levels). Pages: Word
 * lays pages out when it renders, so the file only knows them where Word recorded them
 * (`lastRenderedPageBreak`, written when Word saved it) or where the author put a page break; without
 * either, everything is on page 1.
 */
export function parseDocx(bytes: Uint8Array): ParsedDocument {
  let parts: Record<string, Uint8Array>;
  try {
    parts = unzipSync(bytes, { filter: (file) => PARTS.includes(file.name) && file.originalSize <= MAX_PART_BYTES });
  } catch (error) {
    throw parseError(`the DOCX cannot be unzipped (${(error as Error).message}); re-save it from Word`, error);
  }
  const documentXml = parts['word/document.xml'];
  if (!documentXml)
    throw parseError(`the DOCX's word/document.xml is missing or larger than ${MAX_PART_BYTES} bytes inflated`);
  const xml = strFromU8(documentXml);
  if (!/<w:document\b/.test(xml))
    throw parseError('word/document.xml of the DOCX is not a WordprocessingML document (no <w:document>)');
  const styles = headingStyles(parts['word/styles.xml'] && strFromU8(parts['word/styles.xml']));
  const rendered = xml.includes('<w:lastRenderedPageBreak');

  const paragraphs: Paragraph[] = [];
  const open: Paragraph[] = [];
  let page = 1;
  let inText = false;
  let inProperties = false;
  // One pass over tags and text; paragraphs nest (text boxes), hence the stack.
  for (const match of xml.matchAll(/<(\/?)([A-Za-z][\w.]*:)?([A-Za-z][\w.]*)([^>]*?)(\/?)>|([^<]+)/g)) {
    const [, closing, prefix, local, attributes = '', selfClosing, text] = match;
    const current = open.at(-1);
    if (text !== undefined) {
      if (inText && current) current.text += decodeXmlEntities(text);
      continue;
    }
    if (prefix !== 'w:') continue;
    if (local === 'p') {
      if (closing) {
        const done = open.pop();
        if (done) paragraphs.push(done);
      } else if (selfClosing) {
        continue;
      } else {
        open.push({ text: '', styleId: undefined, outlineLevel: undefined, page });
      }
    } else if (local === 'pPr') {
      inProperties = !closing && !selfClosing;
    } else if (local === 't' || local === 'delText') {
      // Deleted text (tracked changes) is not part of the document as it reads now.
      inText = local === 't' && !closing && !selfClosing;
    } else if (!current || closing) {
      continue;
    } else if (local === 'pStyle' && inProperties) {
      current.styleId = attribute(attributes, 'w:val');
    } else if (local === 'outlineLvl' && inProperties) {
      const level = Number(attribute(attributes, 'w:val'));
      if (Number.isInteger(level) && level < 9) current.outlineLevel = level + 1;
    } else if (local === 'pageBreakBefore' && inProperties && !rendered && !/w:val="(false|0)"/.test(attributes)) {
      if (paragraphs.length > 0 || current.text) current.page = page += 1;
    } else if (local === 'tab') {
      current.text += '\t';
    } else if (local === 'br' || local === 'cr') {
      if (!rendered && attribute(attributes, 'w:type') === 'page') page += 1;
      else current.text += '\n';
    } else if (local === 'lastRenderedPageBreak') {
      page += 1;
      // A paragraph that starts on the new page belongs to it.
      if (!current.text.trim()) current.page = page;
    }
  }

  const blocks: Block[] = [];
  let styleTitle: string | null = null;
  for (const paragraph of paragraphs) {
    const text = collapseWhitespace(paragraph.text);
    if (!text) continue;
    const level =
      paragraph.styleId === undefined
        ? paragraph.outlineLevel
        : (styles.get(paragraph.styleId) ?? builtInLevel(paragraph.styleId) ?? paragraph.outlineLevel);
    if (level === TITLE_LEVEL) styleTitle ??= text;
    // The Title paragraph names the document; as text it stays, as a heading it would displace Heading 1.
    blocks.push(
      level === undefined || level === TITLE_LEVEL
        ? { kind: 'paragraph', text, page: paragraph.page }
        : { kind: 'heading', level, text, page: paragraph.page },
    );
  }
  const coreXml = parts['docProps/core.xml'] && strFromU8(parts['docProps/core.xml']);
  const coreTitle = coreXml
    ? collapseWhitespace(decodeXmlEntities(/<dc:title>([\s\S]*?)<\/dc:title>/.exec(coreXml)?.[1] ?? ''))
    : '';
  const title = coreTitle || styleTitle || (blocks.find((block) => block.kind === 'heading')?.text ?? null);
  return { type: 'docx', title, pages: null, blocks };
}
