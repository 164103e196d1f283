import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { BadRequestError, PayloadTooLargeError } from '../../errors.js';

/**
 * `POST /runs/multipart` bodies (docs/langsmith-protocol.md): a run split over parts named
 * `post.{id}` (the run without its big fields), `post.{id}.inputs|outputs|events|extra|error|serialized`,
 * the same under `patch.`, `feedback.{id}`, and `attachment.{id}.{name}` (binary, not kept). The SDK
 * streams the body (chunked, no Content-Length) and names no filename, so every part is a field.
 * Parsed with busboy, bounded: the whole body, each part and the number of parts.
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

export function parseMultipartRuns(
  stream: Readable,
  contentType: string,
  limits: MultipartLimits,
): Promise<MultipartRuns> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        limits: { fieldSize: limits.maxBodyBytes, fields: limits.maxParts, files: limits.maxParts, fieldNameSize: 300 },
      });
    } catch {
      reject(new BadRequestError('multipart body without a boundary; send multipart/form-data; boundary=…'));
      return;
    }
    const ops = { post: new Map<string, Record<string, unknown>>(), patch: new Map<string, Record<string, unknown>>() };
    const feedback: Record<string, unknown>[] = [];
    const rejected: MultipartRuns['rejected'] = [];
    const broken = new Set<string>();
    let attachments = 0;
    let bytes = 0;
    let failed = false;
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      stream.unpipe(parser);
      stream.resume();
      reject(error);
    };
    const tooLarge = () =>
      new PayloadTooLargeError(`request body is too large: at most ${limits.maxBodyBytes} bytes; send fewer runs`);

    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limits.maxBodyBytes) fail(tooLarge());
    });
    stream.on('error', (error) => fail(error));

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

    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) fail(tooLarge());
      else if (!failed) take(name, value);
    });
    parser.on('file', (name, file) => {
      // A part sent with a filename: an attachment; its bytes are read and dropped.
      if (name.startsWith('attachment.')) attachments++;
      file.resume();
      file.on('limit', () => fail(tooLarge()));
    });
    parser.on('fieldsLimit', () => fail(new PayloadTooLargeError(`at most ${limits.maxParts} parts per request`)));
    parser.on('filesLimit', () => fail(new PayloadTooLargeError(`at most ${limits.maxParts} parts per request`)));
    parser.on('error', () => fail(new BadRequestError('request body is not valid multipart/form-data')));
    parser.on('close', () => {
      if (failed) return;
      const list = (op: 'post' | 'patch') =>
        [...ops[op].entries()].filter(([id]) => !broken.has(`${op}.${id}`)).map(([, run]) => run);
      resolve({ post: list('post'), patch: list('patch'), feedback, rejected, attachments });
    });
    stream.pipe(parser);
  });
}
