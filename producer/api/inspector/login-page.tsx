import { CSRF_FIELD } from '../auth/csrf.js';
import { Layout, renderPage } from './layout.js';

/** Where a sign-in form posts, and what it tells the person signing in. */
export interface SignInForm {
  /** `/runs/login` (any key: its tenant's runs) or `/admin/login` (the admin key: Bull Board too). */
  action: string;
  heading: string;
  keyLabel: string;
  hint: string;
}

export const INSPECTOR_SIGN_IN: SignInForm = {
  action: '/runs/login',
  heading: 'Run inspector',
  keyLabel: 'API key',
  hint: "Your key's tenant's runs and batches; an admin key sees every tenant. Scripts can send Authorization: Bearer instead.",
};

export const DASHBOARD_SIGN_IN: SignInForm = {
  action: '/admin/login',
  heading: 'agentq dashboard',
  keyLabel: 'Admin API key',
  hint: 'Scripts can use HTTP Basic auth instead (any user name, the key as password) or an Authorization: Bearer header.',
};

/** The one sign-in page of the inspector and the dashboard: a key in, an HttpOnly session cookie out. */
export function loginPage({ form, next, problem }: { form: SignInForm; next: string; problem?: string }): string {
  return renderPage(
    <Layout title="Sign in" nav={false}>
      <div class="card narrow">
        <form method="post" action={form.action}>
          <h1>{form.heading}</h1>
          {problem ? (
            <p class="problem" role="alert">
              {problem}
            </p>
          ) : null}
          <label for="key">{form.keyLabel}</label>
          <br />
          <input id="key" name="key" type="password" autocomplete="current-password" required autofocus />
          <input type="hidden" name="next" value={next} />
          <p>
            <button type="submit">Sign in</button>
          </p>
          <p class="muted">{form.hint}</p>
        </form>
      </div>
    </Layout>,
  );
}

/** Signing out is a POST with the session's CSRF token: a link (Bull Board's "Sign out") lands here first. */
export function signOutPage({ action, csrf }: { action: string; csrf: string }): string {
  return renderPage(
    <Layout title="Sign out" nav={false}>
      <div class="card narrow">
        <form method="post" action={action}>
          <h1>Sign out</h1>
          <input type="hidden" name={CSRF_FIELD} value={csrf} />
          <p>Ends this browser's session for the run inspector and the dashboard.</p>
          <p>
            <button type="submit" id="sign-out">
              Sign out
            </button>
          </p>
        </form>
      </div>
    </Layout>,
  );
}
