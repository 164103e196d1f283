import type { Readable } from 'node:stream';
import { BadRequestError, PayloadTooLargeError } from '../../errors.js';

/**
 * `POST /runs/multipart` bodies (docs/langsmith-protocol.md): a run split over parts named
 * `post.{id}` (the run without its big fields), `post.{id}.inputs|outputs|events|extra|error|serialized`,
 * the same under `patch.`, `feedback.{id}`, and `attachment.{id}.{name}` (binary, not kept). The SDK
 * streams the body (chunked, no Content-Length) and names no filename, so every part is a field.
 * Bounded: the whole body and the number of parts.
 */

export type MultipartRuns = {
  post: Record<string, unknown>[];
  patch: Record<string, unknown>[];
  feedback: Record<string, unknown>[];
  /** Runs and feedback whose parts were not JSON objects, named by their part. */
  rejected: { name: string; error: string }[];
  /** Attachments met (not stored). */
  attachments: number;
};

export type MultipartLimits = { maxBodyBytes: number; maxParts: number };

const RUN_FIELDS = new Set(['inputs', 'outputs', 'events', 'extra', 'error', 'serialized']);
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The boundary of a `multipart/form-data` content type (quoted or not), or undefined. */
function boundaryOf(contentType: string): string | undefined {
  const m = /;\s*boundary\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;]+))/i.exec(contentType);
  const boundary = m ? (m[1]?.replace(/\\(.)/g, '$1') ?? m[2]) : undefined;
  return boundary && boundary.length <= 200 ? boundary : undefined;
}

/** A header's parameter (`name="post.x"`, `filename=a.png`), or undefined. */
function param(header: string, key: string): string | undefined {
  const m = new RegExp(`;\\s*${key}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^\\s;]*))`, 'i').exec(header);
  return m ? (m[1]?.replace(/\\(.)/g, '$1') ?? m[2]) : undefined;
}

const PLAIN_DISPOSITION = 'Content-Disposition: form-data; name="';

/**
 * The name of a part whose headers start as both SDKs write a field's (`Content-Disposition:
 * form-data; name="post.…"`, the line ending at the name's closing quote: no filename), or undefined
 * for any other headers, which the general reading below takes: a name with a backslash or a `;`,
 * another Content-Disposition line, other spellings. Spares that reading's splitting and expressions
 * for each of the thousands of parts of a batch, with the same answer.
 */
function plainFieldName(headers: string): string | undefined {
  if (!headers.startsWith(PLAIN_DISPOSITION)) return undefined;
  const close = headers.indexOf('"', PLAIN_DISPOSITION.length);
  const lineEnd = headers.indexOf('\r\n');
  if (close < 0 || close + 1 !== (lineEnd < 0 ? headers.length : lineEnd)) return undefined;
  const name = headers.slice(PLAIN_DISPOSITION.length, close);
  if (name.includes('\\') || name.includes(';')) return undefined;
  if (lineEnd >= 0 && /content-disposition/i.test(headers.slice(lineEnd))) return undefined;
  return name;
}

/**
 * The body is read whole (it is bounded by the body limit, as a JSON body is) and split on its
 * boundary with `Buffer.indexOf`: a 500-run SDK body of 2,000 parts parsed 3 to 5 times faster than
 * through busboy's streaming parser (bench/protocols.ts), which was the largest stage of a request.
 */
export function parseMultipartRuns(
  stream: Readable,
  contentType: string,
  limits: MultipartLimits,
): Promise<MultipartRuns> {
  const boundary = boundaryOf(contentType);
  if (boundary === undefined)
    return Promise.reject(
      new BadRequestError('multipart body without a boundary; send multipart/form-data; boundary=…'),
    );
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let failed = false;
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      chunks.length = 0;
      reject(error);
    };
    stream.on('data', (chunk: Buffer) => {
      if (failed) return; // read on and dropped, so the request ends and is answered
      bytes += chunk.length;
      if (bytes > limits.maxBodyBytes) fail(tooLarge(limits));
      else chunks.push(chunk);
    });
    stream.on('error', (error) => fail(error));
    stream.on('end', () => {
      if (failed) return;
      try {
        resolve(splitRuns(Buffer.concat(chunks, bytes), boundary, limits));
      } catch (error) {
        fail(error as Error);
      }
    });
  });
}

const tooLarge = (limits: MultipartLimits) =>
  new PayloadTooLargeError(`request body is too large: at most ${limits.maxBodyBytes} bytes; send fewer runs`);

function splitRuns(body: Buffer, boundary: string, limits: MultipartLimits): MultipartRuns {
  const invalid = () => new BadRequestError('request body is not valid multipart/form-data');
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  const next = Buffer.from(`\r\n--${boundary}`, 'latin1');
  const ops = { post: new Map<string, Record<string, unknown>>(), patch: new Map<string, Record<string, unknown>>() };
  const feedback: Record<string, unknown>[] = [];
  const rejected: MultipartRuns['rejected'] = [];
  const broken = new Set<string>();
  let attachments = 0;
  let fields = 0;
  let files = 0;

  const take = (name: string, value: string) => {
    const [op, id, field, ...rest] = name.split('.');
    if (op === 'attachment') {
      attachments++;
      return;
    }
    if (!id || rest.length) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      rejected.push({ name, error: `part '${name}' is not valid JSON` });
      if (op === 'post' || op === 'patch') broken.add(`${op}.${id}`);
      return;
    }
    if (op === 'feedback' && field === undefined) {
      if (isRecord(parsed)) feedback.push({ id, ...parsed });
      else rejected.push({ name, error: `part '${name}' is not a JSON object` });
      return;
    }
    if (op !== 'post' && op !== 'patch') return;
    const runs = ops[op];
    const run = runs.get(id) ?? { id };
    if (field === undefined) {
      if (!isRecord(parsed)) {
        rejected.push({ name, error: `part '${name}' is not a JSON object` });
        broken.add(`${op}.${id}`);
        return;
      }
      Object.assign(run, parsed, { id });
    } else if (RUN_FIELDS.has(field)) run[field] = parsed;
    runs.set(id, run);
  };

  const crlfAt = (i: number) => body[i] === 0x0d && body[i + 1] === 0x0a;
  let pos = body.indexOf(delimiter);
  if (pos < 0) throw invalid();
  for (;;) {
    pos += delimiter.length;
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) break; // the closing delimiter; the epilogue is ignored
    while (body[pos] === 0x20 || body[pos] === 0x09) pos++; // transport padding
    if (!crlfAt(pos)) throw invalid();
    pos += 2;
    // The part's headers, up to an empty line (none at all: the empty line right away).
    const headersEnd = crlfAt(pos) ? pos : body.indexOf('\r\n\r\n', pos);
    if (headersEnd < 0) throw invalid();
    const valueStart = headersEnd === pos ? pos + 2 : headersEnd + 4;
    const end = body.indexOf(next, valueStart);
    if (end < 0) throw invalid(); // the form ends inside a part
    const headers = body.toString('latin1', pos, headersEnd);
    pos = end + 2;
    const plain = plainFieldName(headers);
    if (plain !== undefined) {
      if (++fields > limits.maxParts) throw new PayloadTooLargeError(`at most ${limits.maxParts} parts per request`);
      take(plain.slice(0, 300), body.toString('utf8', valueStart, end));
      continue;
    }
    let disposition: string | undefined;
    for (const line of headers.split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === 'content-disposition')
        disposition = line.slice(colon + 1);
    }
    // A part that is not form-data is skipped, as a part without a name.
    if (!disposition || disposition.trim().split(';')[0]!.trim().toLowerCase() !== 'form-data') continue;
    const name = param(disposition, 'name');
    if (name === undefined) continue;
    if (param(disposition, 'filename') !== undefined || param(disposition, 'filename\\*') !== undefined) {
      // A part sent with a filename: an attachment; its bytes are dropped.
      if (++files > limits.maxParts) throw new PayloadTooLargeError(`at most ${limits.maxParts} parts per request`);
      if (name.startsWith('attachment.')) attachments++;
      continue;
    }
    if (++fields > limits.maxParts) throw new PayloadTooLargeError(`at most ${limits.maxParts} parts per request`);
    take(name.slice(0, 300), body.toString('utf8', valueStart, end));
  }
  const list = (op: 'post' | 'patch') =>
    [...ops[op].entries()].filter(([id]) => !broken.has(`${op}.${id}`)).map(([, run]) => run);
  return { post: list('post'), patch: list('patch'), feedback, rejected, attachments };
}
