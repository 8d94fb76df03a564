import type { ComponentChildren } from 'preact';
import { CSRF_FIELD } from '../auth/csrf.js';

/** A form that changes a run: POST to the run's action, with the session's CSRF token. */
export function ActionForm({
  action,
  csrf,
  children,
  id,
}: {
  action: string;
  csrf: string | null;
  children: ComponentChildren;
  id?: string;
}) {
  return (
    <form method="post" action={action} {...(id ? { id } : {})}>
      {csrf ? <input type="hidden" name={CSRF_FIELD} value={csrf} /> : null}
      {children}
    </form>
  );
}
