import fs from 'node:fs';
import readline from 'node:readline';
import type { Api } from './client.js';
import { failure } from './client.js';
import { CliError } from './errors.js';

/**
 * `sightline ingest FILE`: spans as JSON lines (one span object per line, the fields of docs/spans.md),
 * or one OTLP/JSON export (`{"resourceSpans": [...]}`), sent in batches. A batch answered 429 or
 * 503, or lost to the network, is sent again after the server's Retry-After (else a growing pause);
 * a batch answered 200 is never sent again. Re-sending is safe anyway: the server never counts a
 * span twice.
 */

export type IngestOptions = {
  batch: number;
  maxAttempts: number;
  progress: (sent: number, total: number | null) => void;
  sleep?: (ms: number) => Promise<void>;
};
export type IngestResult = {
  sent: number;
  accepted: number;
  rejected: { batch: number; index: number; span_id?: string; errors: string[] }[];
};

const RETRY_STATUSES = new Set([429, 502, 503, 504]);

export async function ingestFile(api: Api, file: string, options: IngestOptions): Promise<IngestResult> {
  if (!fs.existsSync(file)) throw new CliError(`no such file: ${file}`);
  const head = fs.readFileSync(file, { encoding: 'utf8', flag: 'r' }).slice(0, 4096).trimStart();
  if (head.startsWith('{') && /^\{\s*"resourceSpans"/.test(head)) return ingestOtlp(api, file, options);
  return ingestLines(api, file, options);
}

async function ingestLines(api: Api, file: string, options: IngestOptions): Promise<IngestResult> {
  const result: IngestResult = { sent: 0, accepted: 0, rejected: [] };
  const lines = readline.createInterface({ input: fs.createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let batch: unknown[] = [];
  let lineNo = 0;
  let batchNo = 0;
  const flush = async () => {
    if (!batch.length) return;
    const body = (await sendWithRetry(
      api,
      '/traces',
      { contentType: 'application/json', data: JSON.stringify({ spans: batch }) },
      options,
    )) as {
      accepted: number;
      rejected: { index: number; span_id?: string; errors: string[] }[];
    };
    result.sent += batch.length;
    result.accepted += body.accepted;
    for (const r of body.rejected) result.rejected.push({ batch: batchNo, ...r });
    batchNo++;
    batch = [];
    options.progress(result.sent, null);
  };
  for await (const line of lines) {
    lineNo++;
    if (!line.trim()) continue;
    try {
      batch.push(JSON.parse(line));
    } catch {
      throw new CliError(`${file}:${lineNo} is not a JSON object (one span per line)`);
    }
    if (batch.length >= options.batch) await flush();
  }
  await flush();
  return result;
}

async function ingestOtlp(api: Api, file: string, options: IngestOptions): Promise<IngestResult> {
  let doc: { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] };
  try {
    doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    throw new CliError(`${file} is not valid OTLP JSON`);
  }
  // One request per resource: an OTLP export keeps its resource's attributes with its spans.
  const resources = doc.resourceSpans ?? [];
  const total = resources.reduce((n, r) => n + (r.scopeSpans ?? []).reduce((m, s) => m + (s.spans?.length ?? 0), 0), 0);
  const result: IngestResult = { sent: 0, accepted: 0, rejected: [] };
  for (const resource of resources) {
    const count = (resource.scopeSpans ?? []).reduce((m, s) => m + (s.spans?.length ?? 0), 0);
    const body = (await sendWithRetry(
      api,
      '/otel/v1/traces',
      { contentType: 'application/json', data: JSON.stringify({ resourceSpans: [resource] }) },
      options,
    )) as {
      partialSuccess?: { rejectedSpans?: number | string; errorMessage?: string };
    };
    const rejected = Number(body?.partialSuccess?.rejectedSpans ?? 0);
    result.sent += count;
    result.accepted += count - rejected;
    if (rejected)
      result.rejected.push({
        batch: result.rejected.length,
        index: -1,
        errors: [body.partialSuccess?.errorMessage ?? `${rejected} spans rejected`],
      });
    options.progress(result.sent, total);
  }
  return result;
}

async function sendWithRetry(
  api: Api,
  path: string,
  raw: { contentType: string; data: string },
  options: IngestOptions,
): Promise<unknown> {
  const sleep = options.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)));
  const url = `${api.target.apiUrl}/api/v1/public${path}`;
  let lastError = '';
  for (let attempt = 1; attempt <= options.maxAttempts; attempt++) {
    let answer;
    try {
      answer = await api.send(url, 'POST', { raw }, () => true);
    } catch (error) {
      // Unreachable: the batch may or may not have landed; sending it again never double-counts.
      lastError = (error as Error).message;
      await sleep(backoff(attempt, null));
      continue;
    }
    if (answer.status < 300) return answer.body;
    if (!RETRY_STATUSES.has(answer.status))
      throw new CliError(`a batch was refused: ${failure(answer.status, answer.body, api.credential)}`);
    lastError = failure(answer.status, answer.body, api.credential);
    await sleep(backoff(attempt, answer.headers.get('retry-after')));
  }
  throw new CliError(`gave up after ${options.maxAttempts} attempts: ${lastError}`);
}

/**
 * Retry-After in seconds when the server gave one (capped at a minute), else 0.5 s doubling to 30 s;
 * plus up to a fifth more at random, so clients refused together (a full ingest queue answers many
 * 429s at once) don't all return in the same instant.
 */
function backoff(attempt: number, retryAfter: string | null): number {
  const seconds = retryAfter !== null ? Number(retryAfter) : NaN;
  const base =
    Number.isFinite(seconds) && seconds >= 0
      ? Math.min(seconds, 60) * 1000
      : Math.min(500 * 2 ** (attempt - 1), 30_000);
  return Math.round(base * (1 + Math.random() / 5));
}

/** A one-line progress bar on a terminal; nothing when stderr is not one. */
export function progressPrinter(stream: NodeJS.WriteStream): (sent: number, total: number | null) => void {
  if (!stream.isTTY) return () => {};
  return (sent, total) => {
    const width = 30;
    const bar = total ? `[${'#'.repeat(Math.round((sent / total) * width)).padEnd(width)}] ` : '';
    stream.write(
      `\r${bar}${sent.toLocaleString('en-US')}${total ? ` / ${total.toLocaleString('en-US')}` : ''} spans sent`,
    );
  };
}
