import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';

/** Debian's chromium, headless: no sandbox or GPU (none in a container), no network of its own. */
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
  '--no-pdf-header-footer',
];

/** A fresh temporary directory; `remove()` deletes it. */
export function tempDirectory(prefix = 'agentq-ingest-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * The HTML of the PDF fixture: two pages (a CSS page break), an h1 and an h2, so the PDF has page
 * numbers and font-size headings to find.
 */
export const PDF_HTML = `<!doctype html><html><head><meta charset="utf-8"><title>Annual Report 2024</title>
<style>body { font: 12pt serif; } h1 { font-size: 24pt; } h2 { font-size: 18pt; } .break { page-break-after: always; }</style></head><body>
<h1>Annual Report 2024</h1>
<p>Revenue of the aardvark division grew by twelve percent in the first quarter.</p>
<p>Margins improved as the termite supply chain stabilised.</p>
<div class="break"></div>
<h2>Outlook</h2>
<p>The second page discusses the outlook for the zebra crossing business.</p>
</body></html>`;

/** A real PDF, printed by headless chromium from `html`. Fails with the install command when chromium is missing. */
export function makePdf(html = PDF_HTML): Buffer {
  if (!CHROMIUM)
    throw new Error('the PDF fixture is printed by chromium, which is missing: apt-get install -y chromium');
  const directory = tempDirectory('agentq-pdf-');
  try {
    const source = join(directory.path, 'source.html');
    const output = join(directory.path, 'out.pdf');
    writeFileSync(source, html);
    execFileSync(
      CHROMIUM,
      [...CHROMIUM_FLAGS, `--user-data-dir=${join(directory.path, 'profile')}`, `--print-to-pdf=${output}`, source],
      { stdio: 'ignore', timeout: 60_000 },
    );
    return readFileSync(output);
  } finally {
    directory.remove();
  }
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export type DocxParagraph = { style?: string; text: string; pageBreakBefore?: boolean } | { pageBreak: true };

/**
 * A minimal DOCX written from its XML parts ([Content_Types].xml, the package relationship, the main
 * document, its styles with Heading 1/2 and Title, and the core properties with a title).
 */
export function makeDocx(
  paragraphs: readonly DocxParagraph[],
  { title = 'Field Memo' }: { title?: string } = {},
): Buffer {
  const body = paragraphs
    .map((paragraph) => {
      if ('pageBreak' in paragraph) return '<w:p><w:r><w:br w:type="page"/></w:r></w:p>';
      const properties = [
        paragraph.style ? `<w:pStyle w:val="${paragraph.style}"/>` : '',
        paragraph.pageBreakBefore ? '<w:pageBreakBefore/>' : '',
      ].join('');
      // Split into two runs with a tab: the parser must join runs.
      const [first, ...rest] = paragraph.text.split(' ');
      return `<w:p>${properties ? `<w:pPr>${properties}</w:pPr>` : ''}<w:r><w:rPr><w:b/></w:rPr><w:t>${escapeXml(first ?? '')}</w:t></w:r><w:r><w:t xml:space="preserve"> ${escapeXml(rest.join(' '))}</w:t></w:r></w:p>`;
    })
    .join('');
  const style = (id: string, name: string, outline?: number) =>
    `<w:style w:type="paragraph" w:styleId="${id}"><w:name w:val="${name}"/>${outline === undefined ? '' : `<w:pPr><w:outlineLvl w:val="${outline}"/></w:pPr>`}</w:style>`;
  const files = {
    '[Content_Types].xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/><Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/></Types>`,
    '_rels/.rels': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/></Relationships>`,
    'word/_rels/document.xml.rels': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`,
    'word/document.xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}<w:sectPr/></w:body></w:document>`,
    'word/styles.xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">${style('Normal', 'Normal')}${style('Title', 'Title')}${style('Heading1', 'heading 1', 0)}${style('Heading2', 'heading 2', 1)}</w:styles>`,
    'docProps/core.xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>${escapeXml(title)}</dc:title></cp:coreProperties>`,
  };
  return Buffer.from(zipSync(Object.fromEntries(Object.entries(files).map(([name, text]) => [name, strToU8(text)]))));
}

/** The DOCX fixture: a title, two Heading 1 sections (one with a Heading 2), and a page break. */
export const DOCX_PARAGRAPHS: DocxParagraph[] = [
  { style: 'Title', text: 'Field Memo' },
  { style: 'Heading1', text: 'Observations' },
  { text: 'The pangolin population near the river doubled this spring.' },
  { style: 'Heading2', text: 'Methods' },
  { text: 'Camera traps recorded every burrow entrance at night.' },
  { pageBreak: true },
  { style: 'Heading1', text: 'Recommendations' },
  { text: 'Protect the wetland corridor from new roads.' },
];

/** An HTML page whose navigation, header, sidebar, footer, script and style must not be indexed. */
export const BOILERPLATE_HTML = `<!DOCTYPE html>
<html><head><title>Okapi Facts</title><style>.menu { color: red }</style><script>var tracking = "SCRIPTWORD";</script></head>
<body>
<header><a href="/">NAVWORD Home</a> · <a href="/about">About</a></header>
<nav><ul><li><a href="/a">NAVWORD menu one</a></li><li>NAVWORD menu two</li></ul></nav>
<main>
  <article>
    <header><h1>Okapi Facts</h1></header>
    <p>The okapi is a forest giraffe living in the Congo basin.</p>
    <h2>Diet</h2>
    <p>Okapis eat leaves, buds and fungi. <em>Over 100</em> plant species are known.</p>
    <ul><li>Leaves</li><li>Clay for minerals</li></ul>
  </article>
</main>
<aside>SIDEWORD related links</aside>
<footer>FOOTWORD © 2024 Example Zoo</footer>
<script>console.log("SCRIPTWORD")</script>
</body></html>`;

export const MARKDOWN = `---
title: Beekeeping Notes
---

# Beekeeping Notes

Bees need a dry hive and calm handling.

## Spring

Check the **queen** and add a [super](https://example.com) when the colony grows.

\`\`\`
# not a heading inside code
\`\`\`

## Winter

Leave enough honey for the colony to survive the cold.
`;

export const PLAIN_TEXT = 'Lichens grow slowly on granite.\n\nThey tolerate drought and frost.\n';

/** A one-page PDF written by hand (Helvetica text; no printer), its cross-reference table exact. */
function handWrittenPdf(text: string, trailerExtra = '', extraObjects: readonly string[] = []): Buffer {
  const content = `BT /F1 12 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    ...extraObjects,
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${index + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R ${trailerExtra} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/**
 * A PDF under the standard security handler (RC4, revision 2) whose user password is not empty: its
 * /O and /U entries match no password a reader could try, so it opens only with the password — what
 * a reader of a protected PDF meets.
 */
export function makePasswordProtectedPdf(): Buffer {
  const bytes = (count: number, seed: number) =>
    Array.from({ length: count }, (_, index) => ((index * 37 + seed) % 256).toString(16).padStart(2, '0')).join('');
  return handWrittenPdf('The vault holds the gold.', `/Encrypt 6 0 R /ID [<${bytes(16, 3)}> <${bytes(16, 3)}>]`, [
    `<< /Filter /Standard /V 1 /R 2 /O <${bytes(32, 1)}> /U <${bytes(32, 2)}> /P -44 >>`,
  ]);
}

/** A 1×1 PNG, stretched over a page: a scan's pages are pictures, with no text layer. */
const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** A two-page PDF of images only (printed by chromium), as a scanner without OCR makes. */
export function makeScannedPdf(): Buffer {
  const image = `<img src="data:image/png;base64,${PIXEL_PNG}" style="width:600px;height:800px">`;
  return makePdf(
    `<!doctype html><html><body style="margin:0">${image}<div style="page-break-after:always"></div>${image}</body></html>`,
  );
}

/**
 * A `pages`-page 10-Q printed by chromium: a cover page (company, form, period), then a page per
 * widget line, each with the running header and its page number; the last page names a quetzal plant.
 */
export function makeLongFiling(pages = 300): Buffer {
  const cover =
    '<h2>UNITED STATES SECURITIES AND EXCHANGE COMMISSION</h2><h1>FORM 10-Q</h1><p>For the quarterly period ended March 31, 2022</p><h2>ACME WIDGETS, INC.</h2><p>(Exact name of registrant as specified in its charter)</p>';
  const body = (page: number) =>
    `<p>Page ${page} discusses widget line ${page}${page === pages ? ': the quetzal plant closed in June.' : '.'}</p>`;
  const sections = Array.from(
    { length: pages },
    (_, index) =>
      `<section style="page-break-after:always"><p style="font-size:9pt">Acme Widgets, Inc. | Form 10-Q</p>${index === 0 ? cover : body(index + 1)}<p style="font-size:9pt">${index + 1}</p></section>`,
  );
  return makePdf(
    `<!doctype html><html><head><meta charset="utf-8"></head><body style="font:11pt serif">${sections.join('')}</body></html>`,
  );
}
