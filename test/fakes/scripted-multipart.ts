/** The multipart/form-data reader of the scripted Batch API's upload route. */

/** The parts of a multipart/form-data body: text fields, and the file part's name and content. */
export function parseMultipart(
  body: string,
  contentType: string,
): { fields: Record<string, string>; file?: { filename: string; content: string } } {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  const fields: Record<string, string> = {};
  let file: { filename: string; content: string } | undefined;
  if (!boundary) return { fields };
  const marker = `--${boundary[1] ?? boundary[2]}`;
  for (const part of body.split(marker)) {
    const split = part.indexOf('\r\n\r\n');
    if (split < 0) continue;
    const head = part.slice(0, split);
    const content = part.slice(split + 4).replace(/\r\n$/, '');
    const name = /name="([^"]*)"/.exec(head)?.[1];
    const filename = /filename="([^"]*)"/.exec(head)?.[1];
    if (filename !== undefined) file = { filename, content };
    else if (name) fields[name] = content;
  }
  return { fields, ...(file ? { file } : {}) };
}
