import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import type TypeScript from 'typescript';

/** The trees whose TypeScript comments must be readable without documents outside the repository. */
export const COMMENTED_TREES = ['bin', 'shared', 'worker', 'producer', 'testing', 'test', 'bench', 'scripts'];

/**
 * What a comment must not lean on: a section of the team's design file (the word DESIGN, then a section
 * sign) or an issue of the tracker by its number. A reader of the repository has neither.
 */
const OUTSIDE_REFERENCES: readonly RegExp[] = [/\bDESIGN(?:\.md)?\s*§/, /\bissues?\s+#?\d+/i];
/** The same, anywhere in a file's text (a comment's `*` and `//` between the words allowed): most files parse not at all. */
const MAYBE_OUTSIDE_REFERENCE = /\bDESIGN(?:\.md)?[\s*/]*§|\bissues?[\s*/]+#?\d+/i;

/** One comment that cites a document outside the repository. */
export interface CommentReference {
  file: string;
  line: number;
  text: string;
}

/** The `.ts` files of the given trees (and `index.ts`), relative to `root`, without node_modules and dist. */
export function commentedFiles(root: string): string[] {
  const files = ['index.ts'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(path);
      } else if (entry.name.endsWith('.ts')) files.push(path);
    }
  };
  for (const tree of COMMENTED_TREES) walk(tree);
  return files;
}

/**
 * The comments of one TypeScript source that cite a document outside the repository. Comments only, as
 * the TypeScript parser sees them: strings, template literals (and the Lua inside them) and test titles
 * are not comments. A comment's lines are joined first, so a reference broken over two lines is found.
 */
export function outsideReferences(file: string, source: string): CommentReference[] {
  if (!MAYBE_OUTSIDE_REFERENCE.test(source)) return [];
  const ts = createRequire(import.meta.url)('typescript') as typeof TypeScript;
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const comments = new Map<number, string>();
  const collect = (ranges: TypeScript.CommentRange[] | undefined): void => {
    for (const range of ranges ?? []) comments.set(range.pos, source.slice(range.pos, range.end));
  };
  // Comments sit before and after tokens; every token is a leaf of the tree (the end-of-file one included).
  const visit = (node: TypeScript.Node): void => {
    const children = node.getChildren(sourceFile);
    if (children.length > 0) {
      for (const child of children) visit(child);
      return;
    }
    collect(ts.getLeadingCommentRanges(source, node.getFullStart()));
    collect(ts.getTrailingCommentRanges(source, node.getEnd()));
  };
  visit(sourceFile);
  const found: CommentReference[] = [];
  for (const [start, comment] of comments) {
    const text = comment.replace(/^\s*(?:\/\*\*?|\*\/?|\/\/)/gm, ' ').replace(/\s+/g, ' ');
    if (OUTSIDE_REFERENCES.some((reference) => reference.test(text))) {
      found.push({ file, line: source.slice(0, start).split('\n').length, text: text.trim().slice(0, 160) });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

/** Every comment under `root`'s commented trees that cites a document outside the repository. */
export function outsideReferencesUnder(root: string): CommentReference[] {
  return commentedFiles(root).flatMap((file) =>
    outsideReferences(relative(root, join(root, file)), readFileSync(join(root, file), 'utf8')),
  );
}
