import { CliError } from './errors.js';
import { readCredentials, type Env, type GlobalOptions, type Target } from './settings.js';

/**
 * The CLI's one way to call Sightline: JSON over fetch with a bearer, every failure turned into a
 * sentence (CliError) that says what went wrong and what to do, never a stack trace.
 */

export type Query = Record<string, string | number | boolean | undefined>;
export type RequestOptions = { query?: Query; body?: unknown; raw?: { contentType: string; data: string | Buffer } };
export type Answer = { status: number; headers: Headers; body: unknown };

export class Api {
  constructor(
    readonly target: Target,
    private readonly bearer: string | null,
    readonly credential: 'api-key' | 'session' | 'none',
  ) {}

  /** The public API (`/api/v1/public/...`). */
  call(method: string, path: string, options: RequestOptions = {}): Promise<unknown> {
    return this.send(`${this.target.apiUrl}/api/v1/public${path}`, method, options).then((a) => a.body);
  }

  /** A web-origin route (`/api/...`: logout, CLI token). */
  web(method: string, path: string, options: RequestOptions = {}): Promise<unknown> {
    return this.send(`${this.target.webUrl}${path}`, method, options).then((a) => a.body);
  }

  /** The raw answer, for callers that decide on the status themselves (ingest retries). */
  async send(
    url: string,
    method: string,
    options: RequestOptions = {},
    accept: (status: number) => boolean = (s) => s < 400,
  ): Promise<Answer> {
    const target = new URL(url);
    for (const [k, v] of Object.entries(options.query ?? {}))
      if (v !== undefined) target.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.bearer) headers.authorization = `Bearer ${this.bearer}`;
    let body: string | Buffer | undefined;
    if (options.raw) {
      headers['content-type'] = options.raw.contentType;
      body = options.raw.data;
    } else if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    let response: Response;
    try {
      response = await fetch(target, {
        method,
        headers,
        body: body as BodyInit | undefined,
        redirect: 'manual',
        signal: AbortSignal.timeout(120_000),
      });
    } catch (error) {
      throw new CliError(
        `cannot reach Sightline at ${target.origin} (${describeNetworkError(error)}); is the server running? Set --api/--web or SIGHTLINE_API_URL/SIGHTLINE_WEB_URL`,
      );
    }
    const text = await response.text();
    let parsed: unknown = text;
    if (text && (response.headers.get('content-type') ?? '').includes('json')) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (!accept(response.status)) throw new CliError(failure(response.status, parsed, this.credential));
    return { status: response.status, headers: response.headers, body: parsed };
  }
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return cause.code;
  if ((error as Error).name === 'TimeoutError') return 'timed out';
  return (error as Error).message ?? 'network error';
}

/** The server's `{detail}` (or 422 list) as one line, with advice for credential failures. */
export function failure(status: number, body: unknown, credential: Api['credential']): string {
  const detail = detailOf(body);
  if (status === 401) {
    const advice =
      credential === 'api-key'
        ? 'check the API key'
        : credential === 'session'
          ? 'run `sightline login` again'
          : 'run `sightline login`, or pass --key';
    return `not authenticated (${detail || 'credential refused'}); ${advice}`;
  }
  if (status === 403) return `not allowed: ${detail || 'forbidden'}`;
  if (status === 429) return `rate limited or busy: ${detail || 'too many requests'}; retry shortly`;
  if (status >= 500) return `the server failed (${status}): ${detail || 'internal error'}`;
  return `${detail || `request failed with HTTP ${status}`}`;
}

function detailOf(body: unknown): string {
  if (!body || typeof body !== 'object') return typeof body === 'string' ? body.slice(0, 300) : '';
  const detail = (body as { detail?: unknown }).detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).join('.')}: ${d.msg ?? 'invalid'}`)
      .join('; ');
  }
  return '';
}

/**
 * The client for a command: an API key (--key or SIGHTLINE_API_KEY) when given, else the stored
 * session of `sightline login`. `need` says which the command can use.
 */
export function connect(
  target: Target,
  options: GlobalOptions,
  env: Env,
  need: 'any' | 'session' | 'api-key' = 'any',
): Api {
  const key = options.key ?? env.SIGHTLINE_API_KEY;
  if (key && need !== 'session') return new Api(target, key, 'api-key');
  if (need === 'api-key')
    throw new CliError('this command needs a project API key: pass --key or set SIGHTLINE_API_KEY');
  const stored = readCredentials(env);
  if (!stored) throw new CliError('not logged in: run `sightline login` (or pass --key with a project API key)');
  return new Api(target, stored.session_token, 'session');
}

/**
 * `project_id` for user credentials: --project or SIGHTLINE_PROJECT, else the account's only project
 * (a login that sees exactly one needs no flag); an API key needs none.
 */
export async function projectQuery(api: Api, options: GlobalOptions, env: Env): Promise<Query> {
  const project = options.project ?? env.SIGHTLINE_PROJECT;
  if (project) return { project_id: project };
  if (api.credential !== 'session') return {};
  const projects = (await api.call('GET', '/projects')) as { data: { id: string; name: string }[] };
  if (projects.data.length === 1) return { project_id: projects.data[0]!.id };
  if (projects.data.length === 0)
    throw new CliError('this login has no project yet: create one in the web application');
  throw new CliError(
    `this login sees ${projects.data.length} projects: pass --project <project-id> (or set SIGHTLINE_PROJECT); \`sightline projects\` lists them`,
  );
}
