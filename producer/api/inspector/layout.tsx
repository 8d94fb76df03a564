import type { ComponentChildren, VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { CSRF_FIELD } from '../auth/csrf.js';
import { PAGE_ASSETS } from './page-assets.js';

/** A signed-in browser's sign-out: a POST form (with the session's CSRF token), never a link. */
export interface SignOut {
  action: string;
  csrf: string;
}

interface LayoutProps {
  title: string;
  children: ComponentChildren;
  /** The navigation links (the sign-in page has none). @default true */
  nav?: boolean;
  /** The sign-out button; none for Bearer callers and an open API. */
  signOut?: SignOut | null;
  /** Scripts of the API's own (`PAGE_ASSETS`) the page loads. @default [] */
  scripts?: readonly string[];
  /** Reload the page every so many seconds (a meta refresh: no script). */
  refreshSeconds?: number;
}

/** The pages' frame: head, header with navigation, the content. */
export function Layout({ title, children, nav = true, signOut = null, scripts = [], refreshSeconds }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {refreshSeconds ? <meta http-equiv="refresh" content={String(refreshSeconds)} /> : null}
        <title>{`${title} · agentq`}</title>
        <link rel="stylesheet" href={PAGE_ASSETS.style.path} />
        {scripts.map((src) => (
          <script src={src} defer />
        ))}
      </head>
      <body>
        <header>
          <strong>agentq</strong>
          {nav ? (
            <>
              <a href="/runs">Runs</a>
              <a href="/graphs">Graphs</a>
              <a href="/admin/queues">Bull Board</a>
              <a href="/docs">API docs</a>
            </>
          ) : null}
          <span class="spacer" />
          {signOut ? (
            <form method="post" action={signOut.action}>
              <input type="hidden" name={CSRF_FIELD} value={signOut.csrf} />
              <button class="link" id="sign-out" type="submit">
                Sign out
              </button>
            </form>
          ) : null}
        </header>
        <main>{children}</main>
      </body>
    </html>
  );
}

/** A page as the HTML the API sends: every value in it was escaped by the renderer. */
export function renderPage(page: VNode): string {
  return `<!doctype html>\n${renderToString(page)}`;
}
