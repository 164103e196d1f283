import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CliError } from './errors.js';

/**
 * Where the CLI talks to and with what: flags first, then SIGHTLINE_* variables, then the stored
 * credentials of `sightline login`, then the self-hosted defaults (docs/cli.md).
 */

export type Credentials = { api_url: string; web_url: string; session_token: string; saved_at: string };
export type Target = { apiUrl: string; webUrl: string };
export type GlobalOptions = { api?: string; web?: string; key?: string; project?: string };
export type Env = Record<string, string | undefined>;

export const DEFAULT_API = 'http://localhost:8000';
export const DEFAULT_WEB = 'http://localhost:3000';

/** `$XDG_CONFIG_HOME/sightline/credentials.json`, else `~/.config/sightline/credentials.json`. */
export function credentialsPath(env: Env): string {
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'sightline', 'credentials.json');
}

export function readCredentials(env: Env): Credentials | null {
  const file = credentialsPath(env);
  if (!fs.existsSync(file)) return null;
  try {
    const value = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Credentials>;
    if (typeof value.session_token !== 'string') return null;
    return value as Credentials;
  } catch {
    throw new CliError(`the credentials file ${file} is not valid JSON; run \`sightline logout\` and log in again`);
  }
}

/** Written with mode 0600 in a 0700 folder: the session token is as good as the password. */
export function writeCredentials(env: Env, credentials: Credentials): string {
  const file = credentialsPath(env);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(temp, file);
  fs.chmodSync(file, 0o600);
  return file;
}

export function removeCredentials(env: Env): boolean {
  const file = credentialsPath(env);
  if (!fs.existsSync(file)) return false;
  fs.rmSync(file);
  return true;
}

export function resolveTarget(options: GlobalOptions, env: Env): Target {
  const stored = safeRead(env);
  const apiUrl = options.api ?? env.SIGHTLINE_API_URL ?? stored?.api_url ?? DEFAULT_API;
  const webUrl = options.web ?? env.SIGHTLINE_WEB_URL ?? stored?.web_url ?? DEFAULT_WEB;
  return { apiUrl: checkUrl(apiUrl, '--api'), webUrl: checkUrl(webUrl, '--web') };
}

function safeRead(env: Env): Credentials | null {
  try {
    return readCredentials(env);
  } catch {
    return null;
  }
}

function checkUrl(raw: string, flag: string): string {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
    return url.href.replace(/\/+$/, '');
  } catch {
    throw new CliError(`${flag} must be an http(s) URL, not ${JSON.stringify(raw)}`);
  }
}
