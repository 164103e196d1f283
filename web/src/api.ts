/**
 * The browser's only door to the server. `/app-api/...` is the public API mounted on the web origin
 * (src/web/app-api.ts); `/api/...` are the web process's own routes. The session rides in an HttpOnly
 * cookie; every call sends the CSRF header the server requires before a cookie may authenticate a write.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly body: unknown,
  ) {
    super(detail);
  }
}

type Query = Record<string, string | number | boolean | undefined | null>;
export type CallOptions = { method?: string; query?: Query; body?: unknown; signal?: AbortSignal };

function detailOf(status: number, body: unknown): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    // 422: [{loc, msg}]: name the field the server refused.
    return detail
      .map(
        (d: { loc?: unknown[]; msg?: string }) =>
          `${(d.loc ?? []).filter((p) => p !== 'body' && p !== 'query').join('.')}: ${d.msg ?? 'invalid'}`,
      )
      .join('; ');
  }
  return `request failed (${status})`;
}

export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}${path.includes('?') ? '&' : '?'}${qs}` : path;
}

export async function request<T>(url: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { 'x-sightline-csrf': '1', accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(withQuery(url, options.query), {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    credentials: 'same-origin',
    signal: options.signal,
  });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  if (!res.ok) {
    const error = new ApiError(res.status, detailOf(res.status, body), body);
    if (res.status === 401 && !url.startsWith('/api/auth/'))
      window.dispatchEvent(new CustomEvent('sightline:unauthorized'));
    throw error;
  }
  return body as T;
}

/** A public API route, e.g. `api('/traces', {query: {project_id}})`. */
export function api<T>(path: string, options: CallOptions = {}): Promise<T> {
  return request<T>(`/app-api${path}`, options);
}

export function isNotFound(error: unknown): boolean {
  return (
    error instanceof ApiError &&
    (error.status === 404 || (error.status === 422 && /path/.test(JSON.stringify(error.body))))
  );
}
