import { unzipSync } from 'fflate';
import type { DocumentType } from './parsed-document.js';
import { parseError, unsupportedFormat } from './document-parse-error.js';

type DetectedDocument =
  { type: 'pdf' | 'docx'; bytes: Uint8Array } | { type: 'html' | 'markdown' | 'text'; text: string };

const SUPPORTED = 'PDF, DOCX, HTML, Markdown or plain text';
const MARKDOWN_EXTENSIONS = /\.(md|markdown|mdown|mkd|mdx)$/i;
const TEXT_EXTENSIONS = /\.(txt|text|log|csv|tsv)$/i;

function startsWith(bytes: Uint8Array, signature: string, offset = 0): boolean {
  for (let index = 0; index < signature.length; index += 1)
    if (bytes[offset + index] !== signature.charCodeAt(index)) return false;
  return true;
}

/** `%PDF-` at the start, or within the first KiB (some writers put junk before it, and readers accept that). */
function isPdf(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024)).toString('latin1');
  return head.includes('%PDF-');
}

function zipEntries(bytes: Uint8Array): string[] {
  const names: string[] = [];
  try {
    // The filter sees every entry's name and skips inflating all of them: only the directory is read.
    unzipSync(bytes, {
      filter: (file) => {
        names.push(file.name);
        return false;
      },
    });
  } catch (error) {
    throw parseError(
      `the document is a damaged ZIP archive (${(error as Error).message}); if it is a DOCX, re-save it from Word`,
      error,
    );
  }
  return names;
}

/** The text of a text document: UTF-8 (or UTF-16 with a byte-order mark), else Windows-1252; binary refused. */
function decodeText(bytes: Uint8Array): string {
  if (startsWith(bytes, '\xff\xfe')) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (startsWith(bytes, '\xfe\xff')) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  const sample = bytes.subarray(0, 8192);
  let control = 0;
  for (const byte of sample) {
    if (byte === 0) throw unsupportedFormat(`the document is binary data (it contains NUL bytes), not ${SUPPORTED}`);
    if (byte < 32 && byte !== 9 && byte !== 10 && byte !== 13 && byte !== 12) control += 1;
  }
  if (control > sample.length * 0.05)
    throw unsupportedFormat(
      `the document is binary data (${control} control bytes in its first ${sample.length}), not ${SUPPORTED}`,
    );
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    // Not UTF-8, but no binary control bytes either: legacy 8-bit text is the likely reading.
    return new TextDecoder('windows-1252').decode(bytes);
  }
}

function looksLikeHtml(text: string): boolean {
  const head = text
    .slice(0, 2048)
    .replace(/^\uFEFF/, '')
    .trimStart();
  return (
    /^(<!doctype\s+html|<html[\s>])/i.test(head) ||
    (/^<(\?xml|!--)/i.test(head) && /<html[\s>]/i.test(head)) ||
    /^<(head|body)[\s>]/i.test(head)
  );
}

function looksLikeMarkdown(text: string): boolean {
  const head = text.slice(0, 8192);
  return /^#{1,6}\s+\S/m.test(head) || /^\S.*\n(=+|-+)\s*$/m.test(head) || /^```/m.test(head);
}

/**
 * The document's type from its content: `%PDF` → PDF; a ZIP holding `word/document.xml` → DOCX;
 * text starting with `<!doctype html>` / `<html` → HTML; other text → Markdown when its name or its
 * headings say so, else plain text. The name is only a hint between Markdown and text: a `.txt` file
 * that is really a PDF is parsed as a PDF. Throws UNSUPPORTED_FORMAT for empty and binary documents.
 */
export function detectDocumentType(bytes: Uint8Array, name: string): DetectedDocument {
  if (bytes.length === 0) throw unsupportedFormat('the document is empty (0 bytes); nothing to index');
  if (isPdf(bytes)) return { type: 'pdf', bytes };
  if (startsWith(bytes, 'PK\x03\x04')) {
    const entries = zipEntries(bytes);
    if (entries.includes('word/document.xml')) return { type: 'docx', bytes };
    throw unsupportedFormat(
      `the document is a ZIP archive but not a Word document (no word/document.xml among its ${entries.length} entries); unzip it and ingest the files inside`,
    );
  }
  const text = decodeText(bytes).replace(/^\uFEFF/, '');
  if (text.trim().length === 0) throw unsupportedFormat('the document has only whitespace; nothing to index');
  let type: DocumentType;
  if (looksLikeHtml(text)) type = 'html';
  else if (MARKDOWN_EXTENSIONS.test(name)) type = 'markdown';
  else if (TEXT_EXTENSIONS.test(name)) type = 'text';
  else type = looksLikeMarkdown(text) ? 'markdown' : 'text';
  return { type: type as 'html' | 'markdown' | 'text', text };
}
