/** The browser half of `sightline login`: a login form that hands a session token to a loopback URL. */

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Only loopback http(s) URLs may receive a session token: the CLI listens on the user's own machine,
 * and anything else would hand the token to a third party.
 */
export function loopbackRedirect(raw: string): URL | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (!LOOPBACK_HOSTS.has(url.hostname)) return null;
  if (url.username || url.password) return null;
  return url;
}

export function redirectWithToken(target: URL, sessionToken: string, state: string | undefined): string {
  const url = new URL(target.href);
  url.searchParams.set('session_token', sessionToken);
  if (state !== undefined) url.searchParams.set('state', state);
  return url.href;
}

function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/** The login page's only style, inline; the web origin's CSP allows exactly it, by hash (security-headers.ts). */
export const LOGIN_STYLE = `
body{font-family:system-ui,sans-serif;background:#0f1115;color:#e6e6e6;display:grid;place-items:center;min-height:100vh;margin:0}
form{background:#181b22;padding:2rem;border-radius:12px;min-width:320px;display:grid;gap:.8rem}
input{padding:.6rem;border-radius:6px;border:1px solid #333;background:#0f1115;color:inherit}
button{padding:.6rem;border-radius:6px;border:0;background:#5b8def;color:#fff;font-weight:600;cursor:pointer}
.error{color:#ff7b7b;margin:0}
`;

export function loginPage(params: {
  redirectUri: string;
  state?: string;
  error?: string;
  email?: string;
  /** The browser's live login: offered as one button, the password form stays for another account. */
  signedIn?: { name: string; email: string } | null;
}): string {
  const error = params.error ? `<p class="error" role="alert">${escapeHtml(params.error)}</p>` : '';
  const hidden = `<input type="hidden" name="redirect_uri" value="${escapeHtml(params.redirectUri)}">
${params.state !== undefined ? `<input type="hidden" name="state" value="${escapeHtml(params.state)}">` : ''}`;
  const signedIn = params.signedIn
    ? `<form method="post" action="/cli/login">
<h1>Sightline</h1><p>Connect the command-line tool as ${escapeHtml(params.signedIn.name)} &lt;${escapeHtml(params.signedIn.email)}&gt;?</p>
${hidden}
<input type="hidden" name="continue_session" value="1">
<button type="submit">Continue as ${escapeHtml(params.signedIn.email)}</button>
</form>
<p>Or log in as someone else:</p>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sightline · CLI login</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${LOGIN_STYLE}</style></head>
<body>${signedIn}<form method="post" action="/cli/login">
<h1>Sightline</h1><p>Log in to connect the command-line tool.</p>${error}
${hidden}
<label>E-mail <input name="email" type="email" autocomplete="username" required value="${escapeHtml(params.email ?? '')}"></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Log in</button>
</form></body></html>`;
}
