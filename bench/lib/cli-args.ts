/** The values given after `name` on this process's command line (`--root a --root b` → ['a', 'b']). */
export function argValues(name: string, args: readonly string[] = process.argv.slice(2)): string[] {
  return args.flatMap((arg, index) => (arg === name && args[index + 1] ? [args[index + 1]!] : []));
}
