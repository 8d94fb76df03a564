function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** The dashboard's sign-in form: the admin API key in, an HttpOnly session cookie out. */
export function loginPage({ next, problem }: { next: string; problem?: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>agentq dashboard: sign in</title>
<style>
  body { font-family: system-ui, sans-serif; background: #f4f5f7; display: grid; place-items: center; min-height: 100vh; margin: 0; }
  form { background: #fff; padding: 2rem; border-radius: 8px; box-shadow: 0 1px 4px #0002; width: 22rem; }
  h1 { font-size: 1.2rem; margin-top: 0; }
  label { display: block; margin-bottom: .4rem; }
  input[type=password] { width: 100%; box-sizing: border-box; padding: .5rem; font-family: monospace; }
  button { margin-top: 1rem; padding: .5rem 1.2rem; }
  .problem { color: #b00020; }
  .hint { color: #555; font-size: .85rem; }
</style>
</head>
<body>
<form method="post" action="/admin/login">
  <h1>agentq dashboard</h1>
  ${problem ? `<p class="problem" role="alert">${escapeHtml(problem)}</p>` : ''}
  <label for="key">Admin API key</label>
  <input id="key" name="key" type="password" autocomplete="current-password" required autofocus>
  <input type="hidden" name="next" value="${escapeHtml(next)}">
  <button type="submit">Sign in</button>
  <p class="hint">Scripts can use HTTP Basic auth instead (any user name, the key as password) or an Authorization: Bearer header.</p>
</form>
</body>
</html>
`;
}
