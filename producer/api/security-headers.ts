import fastifyHelmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

type Directives = Record<string, string[]>;

/**
 * The pages' own policy: scripts and styles only from this API's files (no inline script or style, so
 * text that got into a page cannot run), nothing framed, forms post only here.
 */
export const PAGES_CSP: Directives = {
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
export const DASHBOARD_CSP: Directives = {
  ...PAGES_CSP,
  'default-src': ["'self'"],
  'style-src': ["'self'", "'unsafe-inline'", 'https://fonts.googleapis.com'],
  'font-src': ["'self'", 'data:', 'https://fonts.gstatic.com'],
  'base-uri': ["'self'"],
};

/** Swagger UI (/docs): script files of its own, inline styles from its React UI. */
export const DOCS_CSP: Directives = {
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

/**
 * Security headers on every answer (helmet): the Content-Security-Policy above, X-Frame-Options DENY
 * with `frame-ancestors 'none'`, X-Content-Type-Options nosniff, Referrer-Policy same-origin (run ids
 * in URLs do not leak to other sites; same-origin forms keep their Origin header), and helmet's other
 * defaults. No Strict-Transport-Security: the TLS-terminating proxy knows whether https is there.
 * Register before any route: the per-path policies are set as routes are added.
 */
export async function registerSecurityHeaders(app: FastifyInstance): Promise<void> {
  // Before helmet's own onRoute hook, which reads a route's `helmet` option.
  app.addHook('onRoute', (route) => {
    const url = route.url ?? '';
    const policy = POLICIES.find(([prefix]) => url === prefix || url.startsWith(`${prefix}/`));
    if (policy) route.helmet = { contentSecurityPolicy: { useDefaults: false, directives: policy[1] } };
  });
  await app.register(fastifyHelmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: PAGES_CSP },
    strictTransportSecurity: false,
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: 'same-origin' },
  });
}
