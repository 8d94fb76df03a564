/**
 * The one rule for secrets in text agentq shows (error messages, run errors, log lines, health answers):
 * a URL's user information (`redis://agentq:<password>@host`) and the values of query parameters that
 * carry credentials (`?password=…`, `?token=…`) become `***`. Applied where text leaves the process —
 * AgentqError messages, the API's error bodies, the logger — so no caller has to remember it.
 */

/** `scheme://userinfo@`: greedy up to the last `@` before the path (an unencoded `@` in a password). */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@/gi;

/** Query parameters that carry credentials, in any URL of the text. */
const SECRET_PARAMETER =
  /([?&](?:password|passwd|pass|pwd|secret|token|access_token|auth|api[_-]?key|apikey|key)=)[^&#\s'"]*/gi;

/** `text` with the credentials of every URL in it replaced by `***`; text without any is returned as it is. */
export function redactCredentials(text: string): string {
  if (!text.includes('://') && !text.includes('=')) return text;
  return text.replace(URL_USERINFO, '$1***@').replace(SECRET_PARAMETER, '$1***');
}
