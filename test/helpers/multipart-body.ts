/** A multipart/form-data body: text fields and files. */
export function multipart(
  fields: Record<string, string>,
  files: { name: string; content: string | Buffer }[],
): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----agentq${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields))
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  for (const file of files) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
      Buffer.from(file.content),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

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
