/** `text` cut at `max` characters, saying how much was left out (the API serves the whole). */
export function clipped(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** A JSON value as the page shows it: indented, and cut at `max` characters so one value cannot swell a page. */
export function Json({ value, max }: { value: unknown; max: number }) {
  return <pre>{clipped(JSON.stringify(value, null, 2) ?? 'undefined', max)}</pre>;
}
