import { AgentqError } from '../../../shared/contracts/errors.js';
import { detectDocumentType } from './detect-document-type.js';
import { parseError } from './document-parse-error.js';
import type { ParsedDocument } from './parsed-document.js';

/**
 * Bytes → ParsedDocument, the type detected from the content (see detectDocumentType). Parsers of the
 * heavier formats load on first use. Throws an AgentqError UNSUPPORTED_FORMAT or PARSE_ERROR (not
 * retryable) for a document that cannot be indexed, including one without any text.
 */
export async function parseDocument(bytes: Uint8Array, name: string): Promise<ParsedDocument> {
  const detected = detectDocumentType(bytes, name);
  let parsed: ParsedDocument;
  try {
    switch (detected.type) {
      case 'pdf':
        parsed = await (await import('./parse-pdf.js')).parsePdf(detected.bytes);
        break;
      case 'docx':
        parsed = (await import('./parse-docx.js')).parseDocx(detected.bytes);
        break;
      case 'html':
        parsed = (await import('./parse-html.js')).parseHtml(detected.text);
        break;
      case 'markdown':
        parsed = (await import('./parse-markdown.js')).parseMarkdown(detected.text);
        break;
      case 'text':
        parsed = (await import('./parse-text.js')).parseText(detected.text);
        break;
    }
  } catch (error) {
    if (AgentqError.isInstance(error)) throw error;
    throw parseError(
      `the ${detected.type} parser failed on this document (${error instanceof Error ? error.message : String(error)})`,
      error,
    );
  }
  if (parsed.blocks.length === 0) {
    throw parseError(`the ${detected.type} document has no text to index`);
  }
  return parsed;
}
