import { PassThrough, type Readable } from 'node:stream';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Every answer a test receives from a public route is checked against the answer the OpenAPI document
 * gives for that route and status code (src/openapi.ts; the schemas are the routes' `schema.response`
 * plus the error envelopes): the status must be documented, the content type must be one documented
 * for it, and a JSON body must conform to the schema. The check runs in an `onSend` hook, so it sees
 * exactly the bytes that go out (streamed answers too) whether the test injects or goes over a socket,
 * and it changes nothing. Mismatches are collected and fail the test that received them
 * (answer-check.ts, a setup file of every test file).
 */

type MediaType = { schema?: Record<string, unknown> };
type ResponseDoc = { content?: Record<string, MediaType> };
type OperationDoc = { responses?: Record<string, ResponseDoc> };
export type OpenApiDoc = {
  paths: Record<string, Record<string, OperationDoc>>;
  components?: { schemas?: Record<string, unknown> };
};

const ajv = new Ajv2020({ strict: false, allErrors: true });
// ajv-formats is CommonJS; its default export is the plugin under any interop.
const addFormats = ((formats as unknown as { default?: unknown }).default ?? formats) as (instance: Ajv2020) => void;
addFormats(ajv);
/** Validators by document (one per process in practice), then by route, status key and media type. */
const compiled = new WeakMap<OpenApiDoc, Map<string, ValidateFunction>>();

function validatorFor(doc: OpenApiDoc, key: string, schema: Record<string, unknown>): ValidateFunction {
  let byKey = compiled.get(doc);
  if (!byKey) compiled.set(doc, (byKey = new Map()));
  let validate = byKey.get(key);
  // Named schemas are `$ref`s into the document's components: compile with them beside the schema.
  if (!validate) byKey.set(key, (validate = ajv.compile({ ...schema, components: doc.components })));
  return validate;
}

export type AnswerWatch = {
  /** Mismatches seen since the last call, emptied by it. */
  take(): string[];
};

const watches = new Set<AnswerWatch>();

/** The mismatches every watched app has seen since the last call, emptied by it. */
export function takeAnswerMismatches(): string[] {
  return [...watches].flatMap((w) => w.take());
}

/**
 * Checks the answers `app` gives on routes under `prefix` against the document `doc()` returns, where
 * those routes sit under `docPrefix` (the web process serves the public routes under `/app-api`). Call
 * before `app.ready()`.
 */
/** Answers longer than this are not schema-checked (see the check in watchAnswers). */
const MAX_CHECKED_ANSWER_CHARS = 8 * 1024 * 1024;

export function watchAnswers(
  app: FastifyInstance,
  doc: () => OpenApiDoc,
  prefix: string,
  docPrefix = prefix,
): AnswerWatch {
  const mismatches: string[] = [];
  app.addHook('onSend', async (request, reply, payload) => {
    const route = request.routeOptions.url;
    if (!route?.startsWith(`${prefix}/`) || route.endsWith('/openapi.json') || request.method === 'HEAD')
      return payload;
    const check = (body: string | undefined) => {
      // An answer of tens of MB (a dataset version of 150 cases of 400 KB) is parsed and checked on
      // the server's own event loop here: seconds of test-only work that the liveness watch and the
      // bystander timings of test/idempotency/long-creates.test.ts would count against the server.
      // Its shape is the same as the small answers' of the same route, which are checked.
      if (body !== undefined && body.length > MAX_CHECKED_ANSWER_CHARS) return;
      const problem = answerProblem(doc(), `${docPrefix}${route.slice(prefix.length)}`, request, reply, body);
      if (problem) mismatches.push(`${request.method} ${request.url} → ${reply.statusCode}: ${problem}`);
    };
    if (isStream(payload)) return teed(payload, check);
    check(
      payload === null || payload === undefined
        ? undefined
        : Buffer.isBuffer(payload)
          ? payload.toString('utf8')
          : String(payload),
    );
    return payload;
  });
  const watch: AnswerWatch = { take: () => mismatches.splice(0) };
  watches.add(watch);
  app.addHook('onClose', async () => {
    watches.delete(watch);
  });
  return watch;
}

function isStream(payload: unknown): payload is Readable {
  return typeof (payload as Readable | null)?.pipe === 'function';
}

/**
 * The same bytes, passed on as they come; the whole is checked when the stream ends. Past the size
 * that is not checked, the chunks are no longer kept: joining and decoding a 60 MB answer only to
 * skip it was half a second of one turn of the server's loop, which a bystander's timing counted.
 */
function teed(source: Readable, check: (body: string | undefined) => void): Readable {
  let chunks: Buffer[] | undefined = [];
  let bytes = 0;
  const out = new PassThrough();
  source.on('data', (chunk: Buffer | string) => {
    if (!chunks) return;
    const piece = Buffer.from(chunk);
    bytes += piece.length;
    // A UTF-16 character takes at most 3 UTF-8 bytes: past this many bytes the text is past the limit.
    if (bytes > 3 * MAX_CHECKED_ANSWER_CHARS) chunks = undefined;
    else chunks.push(piece);
  });
  source.once('end', () => chunks && check(Buffer.concat(chunks).toString('utf8')));
  source.once('error', (error) => out.destroy(error));
  source.pipe(out);
  return out;
}

/** What is wrong with this answer for the documented route, or null when it conforms. */
function answerProblem(
  doc: OpenApiDoc,
  route: string,
  request: FastifyRequest,
  reply: FastifyReply,
  body: string | undefined,
): string | null {
  const path = route.replace(/:(\w+)/g, '{$1}');
  const method = request.method.toLowerCase();
  const operation = doc.paths[path]?.[method];
  if (!operation) return `${method.toUpperCase()} ${path} is not in the OpenAPI document`;
  const status = String(reply.statusCode);
  const statusKey = [status, `${status[0]}XX`, 'default'].find((k) => operation.responses?.[k]);
  if (!statusKey)
    return `status ${status} is not documented (documented: ${Object.keys(operation.responses ?? {}).join(', ')})`;
  const content = operation.responses![statusKey]!.content ?? {};
  // A status documented without a body (204 No Content, 304 Not Modified) answers none.
  if (!Object.keys(content).length && !body && !reply.getHeader('content-type')) return null;
  const mediaType = String(reply.getHeader('content-type') ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  const media = content[mediaType] ?? content['*/*'];
  if (!media)
    return `content type '${mediaType}' is not documented for ${statusKey} (documented: ${Object.keys(content).join(', ') || 'none'})`;
  // JSON lines (an export's file) is not one JSON document: its content type is what is checked.
  if (!mediaType.includes('json') || mediaType.includes('ndjson') || !media.schema) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body ?? '');
  } catch {
    return `the body is not JSON: ${String(body).slice(0, 200)}`;
  }
  const validate = validatorFor(doc, `${method} ${path} ${statusKey} ${mediaType}`, media.schema);
  if (validate(parsed)) return null;
  const errors = (validate.errors ?? [])
    .slice(0, 5)
    .map(
      (e) =>
        `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` '${String(e.params.additionalProperty)}'` : ''}`,
    );
  return `the body does not conform to the documented ${statusKey} answer: ${errors.join('; ')}; body: ${String(body).slice(0, 300)}`;
}
