import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod, ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiContext } from '../api-context.js';
import type { Role } from '../auth/api-keys.js';
import { csrfRefusal, csrfToken, CSRF_FIELD, requireSameOrigin } from '../auth/csrf.js';
import { INSPECTOR_COOKIE, readCookie, SESSION_COOKIE, sessionCookie } from '../auth/dashboard-sessions.js';
import { ApiError, sendApiError } from '../errors.js';
import { attemptOf } from '../limits/auth-throttle.js';
import {
  DASHBOARD_SIGN_IN,
  INSPECTOR_SIGN_IN,
  loginPage,
  signOutPage,
  type SignInForm,
} from '../inspector/login-page.js';

/** One way in: the inspector's (any key) or the dashboard's (the admin key; it signs in to the inspector too). */
interface Door {
  form: SignInForm;
  logout: string;
  /** The least role the door admits. */
  role: Role;
  /** Where a signed-in browser may be sent after signing in (only own paths: never `//evil.example`). */
  next: RegExp;
  home: string;
  /** The cookies a sign-in sets, the door's own first (its sign-out form's CSRF token is that session's). */
  cookies: readonly { name: string; path: string }[];
}

const DOORS: readonly Door[] = [
  {
    form: INSPECTOR_SIGN_IN,
    logout: '/runs/logout',
    role: 'producer',
    next: /^\/(runs|batches|docs)(?:[/?#][^\s\\]*)?$/,
    home: '/runs',
    cookies: [{ name: INSPECTOR_COOKIE, path: '/' }],
  },
  {
    form: DASHBOARD_SIGN_IN,
    logout: '/admin/logout',
    role: 'admin',
    next: /^\/admin\/queues(?:[/?#][^\s\\]*)?$/,
    home: '/admin/queues',
    cookies: [
      { name: SESSION_COOKIE, path: '/admin' },
      { name: INSPECTOR_COOKIE, path: '/' },
    ],
  },
];

const loginBody = z.object({ key: z.string().max(4096).default(''), next: z.string().max(2048).optional() }).loose();

/**
 * The sign-in and sign-out of the pages: one page for the inspector (/runs/login) and the dashboard
 * (/admin/login). A posted form must come from this API's own origin (login CSRF); wrong keys count
 * against the client's address like wrong Bearer keys; a sign-out is a POST with the session's CSRF
 * token (its GET shows the button), so no link or image of another page can sign anyone out.
 */
export function signInRoutes(context: ApiContext): FastifyPluginAsyncZod {
  const { apiKeys, sessions, authThrottle } = context;
  const html = (reply: FastifyReply, status: number, body: string) =>
    reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body);

  const signIn = async (door: Door, request: FastifyRequest, reply: FastifyReply, key: string, next: string) => {
    const refuse = (status: number, problem: string, error?: ApiError) => {
      for (const [name, value] of Object.entries(error?.options.headers ?? {})) reply.header(name, value);
      return html(reply, status, loginPage({ form: door.form, next, problem }));
    };
    const tooMany = (error: ApiError) =>
      refuse(
        429,
        `Too many failed sign-ins from your address this minute; try again in ${error.options.headers?.['retry-after'] ?? 60} s.`,
        error,
      );
    const principal = apiKeys.authenticate(key);
    if (!principal) {
      const answer = await authThrottle.failed(attemptOf(request, key), new ApiError(401, 'UNAUTHORIZED', 'not a key'));
      return answer.statusCode === 429 ? tooMany(answer) : refuse(401, 'That key is not valid.');
    }
    if (door.role === 'admin' && principal.role !== 'admin')
      return refuse(403, `That key has the ${principal.role} role; the dashboard needs an admin key.`);
    const token = await sessions.create(principal.keyId);
    const secure = request.protocol === 'https';
    reply.header(
      'set-cookie',
      door.cookies.map(({ name, path }) =>
        sessionCookie(name, token, { path, maxAgeSeconds: sessions.ttlSeconds, secure }),
      ),
    );
    return reply.redirect(next, 303);
  };

  return async (app) => {
    await app.register(async (plain) => {
      const scope = plain.withTypeProvider<ZodTypeProvider>();
      // The forms post urlencoded; only these routes (and the inspector's forms) accept it.
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });
      scope.addHook('onRequest', requireSameOrigin);

      for (const door of DOORS) {
        const safeNext = (next: unknown) => (typeof next === 'string' && door.next.test(next) ? next : door.home);
        /** The session this door's pages were rendered for: its own cookie first. */
        const sessionOf = (request: FastifyRequest) =>
          door.cookies.map(({ name }) => readCookie(request.headers.cookie, name)).find(Boolean);

        scope.get(
          door.form.action,
          { schema: { hide: true, querystring: z.object({ next: z.string().optional() }).loose() } },
          async (request, reply) => {
            if (apiKeys.isOpen && door.role === 'admin') return reply.redirect(door.home, 303);
            return html(reply, 200, loginPage({ form: door.form, next: safeNext(request.query.next) }));
          },
        );

        scope.post(door.form.action, { schema: { hide: true, body: loginBody } }, async (request, reply) => {
          try {
            return await signIn(door, request, reply, request.body.key, safeNext(request.body.next));
          } catch (error) {
            return sendApiError(reply, error);
          }
        });

        scope.get(door.logout, { schema: { hide: true } }, async (request, reply) => {
          const session = sessionOf(request);
          if (!session) return reply.redirect(door.form.action, 303);
          return html(reply, 200, signOutPage({ action: door.logout, csrf: csrfToken(session) }));
        });

        scope.post(
          door.logout,
          {
            schema: {
              hide: true,
              body: z
                .object({ [CSRF_FIELD]: z.string().max(200).optional() })
                .loose()
                .optional(),
            },
          },
          async (request, reply) => {
            const session = sessionOf(request);
            if (session) {
              const refused = csrfRefusal(session, request.body);
              if (refused) return sendApiError(reply, refused);
            }
            // Both cookies' sessions end: a dashboard sign-in also signed the browser in to the inspector.
            const tokens = [
              readCookie(request.headers.cookie, SESSION_COOKIE),
              readCookie(request.headers.cookie, INSPECTOR_COOKIE),
            ];
            for (const token of new Set(tokens.filter((token): token is string => Boolean(token))))
              await sessions.delete(token);
            const secure = request.protocol === 'https';
            reply.header('set-cookie', [
              sessionCookie(SESSION_COOKIE, '', { path: '/admin', maxAgeSeconds: 0, secure }),
              sessionCookie(INSPECTOR_COOKIE, '', { path: '/', maxAgeSeconds: 0, secure }),
            ]);
            return reply.redirect(door.form.action, 303);
          },
        );
      }
    });
  };
}
