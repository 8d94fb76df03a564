import helmet from 'helmet';
import type { FastifyInstance } from 'fastify';

type Directives = Record<string, string[]>;

/**
 * The pages' own policy: scripts and styles only from this API's files (no inline script or style, so
 * text that got into a page cannot run), nothing framed, forms post only here.
 */
const PAGES_CSP: Directives = {
  'default-src': ["'none'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
  'base-uri': ["'none'"],
  'object-src': ["'none'"],
};

/**
 * Bull Board's page (/admin/queues): its scripts are files of its own ('self'), but its React UI sets
 * inline styles and asks Google Fonts for its typeface, and its page sets `<base href>`.
 */
const DASHBOARD_CSP: Directives = {
  ...PAGES_CSP,
  'default-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'", 'https://fonts.googleapis.com'],
  'font-src': ["'self'", 'data:', 'https://fonts.gstatic.com'],
  'base-uri': ["'self'"],
};

/** Swagger UI (/docs): script files of its own, inline styles from its React UI. */
const DOCS_CSP: Directives = {
  ...PAGES_CSP,
  'default-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'font-src': ["'self'", 'data:'],
  'base-uri': ["'self'"],
};

/** Which policy a route gets, by its path: the pages' own unless a third-party UI needs a looser one. */
const POLICIES: readonly [prefix: string, directives: Directives][] = [
  ['/admin/queues', DASHBOARD_CSP],
  ['/docs', DOCS_CSP],
];

/** The headers of one policy: helmet's middleware, built once (@fastify/helmet builds it again for every request). */
function headersWith(directives: Directives) {
  return helmet({
    contentSecurityPolicy: { useDefaults: false, directives },
    strictTransportSecurity: false,
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: 'same-origin' },
  });
}

/**
 * Security headers on every answer (helmet): the Content-Security-Policy above, X-Frame-Options DENY
 * with `frame-ancestors 'none'`, X-Content-Type-Options nosniff, Referrer-Policy same-origin (run ids
 * in URLs do not leak to other sites; same-origin forms keep their Origin header), and helmet's other
 * defaults. No Strict-Transport-Security: the TLS-terminating proxy knows whether https is there.
 */
export function registerSecurityHeaders(app: FastifyInstance): void {
  const pages = headersWith(PAGES_CSP);
  const byPrefix = POLICIES.map(([prefix, directives]) => [prefix, headersWith(directives)] as const);
  app.addHook('onRequest', (request, reply, done) => {
    // The route's pattern (not the raw URL, whose path may be encoded any way); unrouted 404s get the pages' policy.
    const url = request.routeOptions.url ?? '';
    const own = byPrefix.find(([prefix]) => url === prefix || url.startsWith(`${prefix}/`));
    (own?.[1] ?? pages)(request.raw, reply.raw, () => done());
  });
}
