/** Multipart/form-data bodies read back: the scripted Batch API's upload route and the contract checks of what the SDK sent. */
import { Buffer } from 'node:buffer';

/** The parts of a multipart/form-data body, in order: each part's field name, file name (if any) and bytes. */
export function parseMultipartParts(
  body: Buffer,
  contentType: string,
): { name: string; filename?: string; content: Buffer }[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  if (!boundary) return [];
  const delimiter = Buffer.from(`\r\n--${boundary[1] ?? boundary[2]}`);
  // The first delimiter has no CRLF before it: add one so every part is found the same way.
  const text = Buffer.concat([Buffer.from('\r\n'), body]);
  const parts: { name: string; filename?: string; content: Buffer }[] = [];
  let start = text.indexOf(delimiter);
  while (start >= 0) {
    const next = text.indexOf(delimiter, start + delimiter.length);
    if (next < 0) break;
    const part = text.subarray(start + delimiter.length + 2, next);
    const split = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, Math.max(split, 0)).toString('utf8');
    const name = /name="([^"]*)"/.exec(head)?.[1];
    const filename = /filename="([^"]*)"/.exec(head)?.[1];
    if (split >= 0 && name !== undefined)
      parts.push({ name, ...(filename === undefined ? {} : { filename }), content: part.subarray(split + 4) });
    start = next;
  }
  return parts;
}

/** The text fields of a multipart/form-data body, and its (last) file part's name and content as text. */
export function parseMultipart(
  body: string,
  contentType: string,
): { fields: Record<string, string>; file?: { filename: string; content: string } } {
  const fields: Record<string, string> = {};
  let file: { filename: string; content: string } | undefined;
  for (const part of parseMultipartParts(Buffer.from(body, 'utf8'), contentType)) {
    if (part.filename !== undefined) file = { filename: part.filename, content: part.content.toString('utf8') };
    else fields[part.name] = part.content.toString('utf8');
  }
  return { fields, ...(file ? { file } : {}) };
}
