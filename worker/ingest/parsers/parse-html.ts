import { parseHTML } from 'linkedom';
import { collapseWhitespace, type Block, type ParsedDocument } from './parsed-document.js';

/** Never content: code, media, controls, and the page furniture (navigation, sidebars, banners). */
const BOILERPLATE = [
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'object',
  'embed',
  'svg',
  'canvas',
  'nav',
  'aside',
  'form',
  'button',
  'select',
  'dialog',
  '[role=navigation]',
  '[role=banner]',
  '[role=contentinfo]',
  '[role=complementary]',
  '[role=search]',
  '[aria-hidden=true]',
  '[hidden]',
].join(', ');

const BLOCK = new Set([
  'ADDRESS',
  'ARTICLE',
  'BLOCKQUOTE',
  'CAPTION',
  'DD',
  'DETAILS',
  'DIV',
  'DL',
  'DT',
  'FIELDSET',
  'FIGCAPTION',
  'FIGURE',
  'HR',
  'LI',
  'MAIN',
  'OL',
  'P',
  'PRE',
  'SECTION',
  'SUMMARY',
  'TABLE',
  'TBODY',
  'TD',
  'TFOOT',
  'TH',
  'THEAD',
  'TR',
  'UL',
  'BR',
  'HEADER',
  'FOOTER',
  'BODY',
]);
const HEADING = /^H([1-6])$/;

interface DomNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<DomNode>;
}

/**
 * HTML → the main content's headings and paragraphs (linkedom, no browser). Scripts, styles, navigation,
 * sidebars, forms and the page's own header and footer are removed; a `<main>` (or a single
 * `<article>`) is taken as the content when the page has one. Headers inside an article stay (they
 * usually hold its title).
 */
export function parseHtml(html: string): ParsedDocument {
  const { document } = parseHTML(html);
  for (const element of [...document.querySelectorAll(BOILERPLATE)]) element.remove();
  for (const element of [...document.querySelectorAll('header, footer')]) {
    if (element.tagName === 'FOOTER' || !element.parentElement?.closest('article, main, [role=main]')) element.remove();
  }
  const articles = document.querySelectorAll('article');
  const root =
    document.querySelector('main, [role=main]') ??
    (articles.length === 1 ? articles[0] : null) ??
    document.body ??
    document.documentElement;

  const blocks: Block[] = [];
  let buffer = '';
  const flush = () => {
    const text = collapseWhitespace(buffer);
    if (text) blocks.push({ kind: 'paragraph', text, page: null });
    buffer = '';
  };
  const walk = (node: DomNode) => {
    if (node.nodeType === 3) {
      buffer += node.textContent ?? '';
      return;
    }
    if (node.nodeType !== 1) return;
    const heading = HEADING.exec(node.nodeName.toUpperCase());
    if (heading) {
      flush();
      const text = collapseWhitespace(node.textContent ?? '');
      if (text) blocks.push({ kind: 'heading', level: Number(heading[1]), text, page: null });
      return;
    }
    const block = BLOCK.has(node.nodeName.toUpperCase());
    if (block) flush();
    for (const child of Array.from(node.childNodes)) walk(child);
    if (block) flush();
  };
  if (root) walk(root as unknown as DomNode);
  flush();
  const title =
    collapseWhitespace(document.title ?? '') || (blocks.find((block) => block.kind === 'heading')?.text ?? null);
  return { type: 'html', title, pages: null, blocks };
}
