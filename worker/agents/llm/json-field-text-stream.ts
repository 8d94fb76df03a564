/**
 * Pulls the text of one top-level string field out of a JSON object that arrives in fragments (a tool
 * call's arguments as a model streams them): `push('{"answ')`, `push('er": "Par')` → `'Par'`, … Each
 * `push` returns the newly decoded characters of the field's value, escapes resolved (an escape cut in
 * two waits for its second half). Only the first occurrence of the field counts; anything the parser
 * does not understand stops it quietly (the committed message is the record, this is display only).
 */
export function createJsonFieldTextStream(field: string): (fragment: string) => string {
  let buffer = '';
  let position = 0;
  let state: 'seek' | 'value' | 'done' = 'seek';
  const opener = new RegExp(`"${field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"\\s*:\\s*"`);
  return (fragment) => {
    if (state === 'done') return '';
    buffer += fragment;
    if (state === 'seek') {
      const match = opener.exec(buffer);
      if (!match) return '';
      position = match.index + match[0].length;
      state = 'value';
    }
    let out = '';
    while (position < buffer.length) {
      const char = buffer[position]!;
      if (char === '"') {
        state = 'done';
        break;
      }
      if (char !== '\\') {
        out += char;
        position += 1;
        continue;
      }
      const next = buffer[position + 1];
      if (next === undefined) break;
      if (next === 'u') {
        const hex = buffer.slice(position + 2, position + 6);
        if (hex.length < 4) break;
        out += String.fromCharCode(Number.parseInt(hex, 16));
        position += 6;
        continue;
      }
      out += ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' } as Record<string, string>)[next] ?? next;
      position += 2;
    }
    return out;
  };
}
