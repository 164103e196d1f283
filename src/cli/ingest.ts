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
  progress: Progress;
  sleep?: (ms: number) => Promise<void>;
};
export type IngestResult = {
  sent: number;
  accepted: number;
  rejected: { batch: number; index: number; span_id?: string; errors: string[] }[];
  /** JSON-lines input only: lines that were not a JSON object, left out (1-based line numbers). */
  skipped: { line: number; reason: string }[];
};

/** Where an ingest reports how far it got: the total is known before the first batch is sent. */
export type Progress = { start: (total: number) => void; update: (sent: number) => void; stop: () => void };

const RETRY_STATUSES = new Set([429, 502, 503, 504]);

export async function ingestFile(api: Api, file: string, options: IngestOptions): Promise<IngestResult> {
  if (!fs.existsSync(file)) throw new CliError(`no such file: ${file}`);
  const head = fs.readFileSync(file, { encoding: 'utf8', flag: 'r' }).slice(0, 4096).trimStart();
  if (head.startsWith('{') && /^\{\s*"resourceSpans"/.test(head)) return ingestOtlp(api, file, options);
  return ingestLines(api, file, options);
}

async function ingestLines(api: Api, file: string, options: IngestOptions): Promise<IngestResult> {
  const result: IngestResult = { sent: 0, accepted: 0, rejected: [], skipped: [] };
  options.progress.start(await countLines(file));
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
    options.progress.update(result.sent + result.skipped.length);
  };
  for await (const line of lines) {
    lineNo++;
    if (!line.trim()) continue;
    // A bad line is left out and reported, not the end of the file: the good spans around it still go.
    let span: unknown;
    try {
      span = JSON.parse(line);
    } catch {
      result.skipped.push({ line: lineNo, reason: 'not valid JSON' });
      continue;
    }
    if (span === null || typeof span !== 'object' || Array.isArray(span)) {
      result.skipped.push({ line: lineNo, reason: 'not a JSON object (one span per line)' });
      continue;
    }
    batch.push(span);
    if (batch.length >= options.batch) await flush();
  }
  await flush();
  options.progress.stop();
  return result;
}

/** Non-blank lines of the file, counted in one pass over its bytes before anything is sent. */
async function countLines(file: string): Promise<number> {
  let count = 0;
  let blank = true;
  for await (const chunk of fs.createReadStream(file) as AsyncIterable<Buffer>) {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte === 0x0a) {
        if (!blank) count++;
        blank = true;
      } else if (blank && byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) blank = false;
    }
  }
  return blank ? count : count + 1;
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
  const result: IngestResult = { sent: 0, accepted: 0, rejected: [], skipped: [] };
  options.progress.start(total);
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
    options.progress.update(result.sent);
  }
  options.progress.stop();
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

/**
 * A progress bar on stderr (cli-progress): percent, spans sent of the total, rate and time left, redrawn
 * in place on a terminal; when stderr is not a terminal (a log, CI), the same line every five seconds.
 */
export async function progressBar(stream: NodeJS.WriteStream): Promise<Progress> {
  // Loaded here, not at the top: only `ingest` draws a bar, and every other command starts faster.
  const { default: cliProgress } = await import('cli-progress');
  const bar = new cliProgress.SingleBar({
    stream,
    format: '{bar} {percentage}% | {value}/{total} spans | {rate} spans/s | ETA {eta_formatted}',
    barsize: 30,
    // Block characters on a terminal; plain ASCII in logs.
    barCompleteChar: stream.isTTY ? '\u2588' : '#',
    barIncompleteChar: stream.isTTY ? '\u2591' : '-',
    hideCursor: false,
    clearOnComplete: false,
    noTTYOutput: true,
    notTTYSchedule: 5000,
    etaBuffer: 20,
    formatValue: (value, options, type) =>
      type === 'value' || type === 'total' ? value.toLocaleString('en-US') : String(value),
  });
  const started = Date.now();
  const rate = (sent: number) => {
    const seconds = (Date.now() - started) / 1000;
    return seconds > 0 ? Math.round(sent / seconds).toLocaleString('en-US') : '-';
  };
  return {
    start: (total) => bar.start(total, 0, { rate: '-' }),
    update: (sent) => bar.update(sent, { rate: rate(sent) }),
    stop: () => bar.stop(),
  };
}
