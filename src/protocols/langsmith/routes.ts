import zlib from 'node:zlib';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify';
import type { AppContext } from '../../context.js';
import {
  AppError,
  BadRequestError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from '../../errors.js';
import { API_KEY_ONLY_DETAIL, apiKeyOf, resolvePrincipal } from '../../auth/principal.js';
import { admitIngest, countIngestBody, ingesting, releaseIngest } from '../../traces/ingest-admission.js';
import { MAX_INGEST_BODY_BYTES } from '../../traces/routes.js';
import { storeSpanParts, type SpanPart } from '../span-parts.js';
import { checkIngestQuotas } from '../../controls/quotas.js';
import { parseMultipartRuns } from './multipart.js';
import { runToSpanPart, type RunPayload } from './run-mapping.js';
import { writeFeedback } from './feedback.js';

/**
 * The LangSmith run protocol (quality.md §5; docs/langsmith-protocol.md), under `/api/v1/langsmith`
 * so that `LANGSMITH_ENDPOINT=http://HOST:8000/api/v1/langsmith` points the SDK (and every
 * LangChain/LangGraph app tracing through it) at Sightline. Another product's protocol: these routes
 * are not in the OpenAPI document (openapi.ts documents only the public prefix), as the Langfuse OTLP
 * alias isn't. Runs become span parts (src/protocols/span-parts.ts), so a patch may come before its
 * post and a re-sent batch changes nothing; feedback becomes scores.
 */

export const LANGSMITH_PREFIX = '/api/v1/langsmith';
/** Runs (posts plus patches) per request at most. */
export const MAX_RUNS_PER_REQUEST = 10_000;
/**
 * Run operations (a post or a patch each) the SDK puts in one request at most (/info's `size_limit`;
 * LangSmith's own default is 100). Each request's pieces are one insert, whose fixed cost dominated
 * 100-operation requests (bench/protocols.ts: 31% of native at 100, see docs/langsmith-protocol.md);
 * a busy producer now sends up to 1,000, a quiet one still sends what its aggregation delay gathers.
 */
export const SDK_BATCH_OPERATIONS = 1000;
/** What /info asks the SDK to batch up to, below the body limit so a batch's framing fits. */
const BATCH_SIZE_LIMIT_BYTES = 8 * 1024 * 1024;
const MAX_PARTS = 8 * MAX_RUNS_PER_REQUEST;
/** zstd in zlib from Node 22.15: advertised (and read) only where this process can inflate it. */
const ZSTD = typeof (zlib as { createZstdDecompress?: unknown }).createZstdDecompress === 'function';

/** `GET /info`: what the SDK reads to choose multipart, batch sizes and compression. */
export function serverInfo() {
  return {
    batch_ingest_config: {
      use_multipart_endpoint: true,
      size_limit: SDK_BATCH_OPERATIONS,
      size_limit_bytes: BATCH_SIZE_LIMIT_BYTES,
      scale_up_qsize_trigger: 1000,
      scale_up_nthreads_limit: 16,
      scale_down_nempty_trigger: 4,
    },
    instance_flags: {
      gzip_body_enabled: true,
      zstd_compression_enabled: ZSTD,
      dataset_examples_multipart_enabled: false,
    },
  };
}

/** The API key of `x-api-key` (the SDK's header), or of `Authorization: Bearer`. 401 otherwise. */
function authenticateKey(ctx: AppContext) {
  return async function langsmithAuth(request: FastifyRequest): Promise<void> {
    const header = request.headers['x-api-key'];
    const bearer = /^Bearer[ ]+([^\s]+)\s*$/i.exec(String(request.headers.authorization ?? ''))?.[1];
    const key = (typeof header === 'string' && header.trim() !== '' ? header.trim() : undefined) ?? bearer;
    if (!key) throw new UnauthorizedError("missing API key; send 'x-api-key: <Sightline API key>'");
    const principal = await resolvePrincipal(ctx, key);
    if (principal.kind !== 'api_key') throw new UnauthorizedError(API_KEY_ONLY_DETAIL);
    request.principal = principal;
  };
}

/**
 * `Content-Encoding: gzip` (and `zstd` where advertised) bodies are inflated before parsing; the body
 * limit then applies to the inflated size.
 */
async function inflateBody(request: FastifyRequest, _reply: FastifyReply, payload: RequestPayload) {
  const encoding = String(request.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  if (encoding === '' || encoding === 'identity') return payload;
  let inflate: zlib.Gunzip;
  if (encoding === 'gzip') inflate = zlib.createGunzip();
  else if (encoding === 'zstd' && ZSTD)
    inflate = (zlib as unknown as { createZstdDecompress(): zlib.Gunzip }).createZstdDecompress();
  else
    throw new UnsupportedMediaTypeError(
      `unsupported content encoding '${encoding}'; send identity or gzip${ZSTD ? ' or zstd' : ''}`,
    );
  let encoded = 0;
  payload.on('data', (chunk: Buffer) => {
    encoded += chunk.length;
    (inflate as unknown as { receivedEncodedLength: number }).receivedEncodedLength = encoded;
  });
  inflate.on('error', (error: Error & { statusCode?: number; code?: string }) => {
    error.statusCode = 400;
    error.code = 'SL_INVALID_GZIP';
  });
  payload.pipe(inflate);
  return inflate as unknown as RequestPayload;
}

type Answer = { accepted: number; rejected: { id: string | null; errors: string[] }[] };

/** Each run operation as a span part; those without an id are rejected alone. */
function toParts(post: unknown[], patch: unknown[], receivedAt: number) {
  const parts: SpanPart[] = [];
  const rejected: Answer['rejected'] = [];
  const add = (run: unknown, op: 'post' | 'patch') => {
    if (run === null || typeof run !== 'object' || Array.isArray(run)) {
      rejected.push({ id: null, errors: [`${op}: a run is a JSON object`] });
      return;
    }
    const part = runToSpanPart(run as RunPayload, op, receivedAt);
    if (typeof part === 'string') rejected.push({ id: null, errors: [`${op}: ${part}`] });
    else parts.push(part);
  };
  for (const run of post) add(run, 'post');
  for (const run of patch) add(run, 'patch');
  return { parts, rejected };
}

export function registerLangsmithRoutes(app: FastifyInstance, ctx: AppContext): void {
  const writer = ctx.spanWriter;

  const admitted = {
    onRequest: [authenticateKey(ctx), checkIngestQuotas(ctx), admitIngest(writer, MAX_INGEST_BODY_BYTES)],
    onResponse: releaseIngest,
    bodyLimit: MAX_INGEST_BODY_BYTES,
  };

  /** Stores the runs' parts and feedback; a store failure is 503 (retried; parts are idempotent). */
  async function store(
    request: FastifyRequest,
    post: unknown[],
    patch: unknown[],
    feedback: Record<string, unknown>[] = [],
  ): Promise<Answer> {
    if (post.length + patch.length > MAX_RUNS_PER_REQUEST)
      throw new PayloadTooLargeError(`at most ${MAX_RUNS_PER_REQUEST} runs per request; send fewer runs`);
    const key = apiKeyOf(request);
    const project = { projectId: key.projectId, traceTtlDays: key.traceTtlDays };
    const { parts, rejected } = toParts(post, patch, Date.now());
    try {
      return await ingesting(writer, request, async () => {
        const stored = await storeSpanParts(ctx, project, parts, { writeWhole: true });
        for (const r of stored.rejected) rejected.push({ id: r.span_id, errors: r.errors });
        let accepted = stored.stored;
        if (feedback.length) {
          const written = await writeFeedback(ctx, project, feedback);
          accepted += written.accepted;
          for (const r of written.rejected) rejected.push({ id: r.score_id, errors: r.errors });
        }
        return { accepted, rejected };
      });
    } catch (error) {
      if (error instanceof AppError) throw error;
      request.log.error({ err: error }, 'storing LangSmith runs failed');
      throw new ServiceUnavailableError('the runs could not be stored; retry the request');
    }
  }

  app.get('/info', async () => serverInfo());

  app.register(async (ingest) => {
    ingest.addHook('preParsing', inflateBody);
    ingest.addHook('preParsing', countIngestBody(writer));
    // Multipart bodies are read in the handler (src/protocols/langsmith/multipart.ts).
    ingest.addContentTypeParser('multipart/form-data', (_request, payload, done) => done(null, payload));
    const list = (v: unknown) => (Array.isArray(v) ? v : []);
    const object = (body: unknown): Record<string, unknown> => {
      if (body === null || typeof body !== 'object' || Array.isArray(body))
        throw new BadRequestError('the body is a JSON object');
      return body as Record<string, unknown>;
    };

    ingest.post('/runs/multipart', admitted, async (request, reply) => {
      const contentType = String(request.headers['content-type'] ?? '');
      if (!contentType.toLowerCase().startsWith('multipart/form-data'))
        throw new UnsupportedMediaTypeError('send multipart/form-data');
      const parsed = await parseMultipartRuns(request.body as Readable, contentType, {
        maxBodyBytes: MAX_INGEST_BODY_BYTES,
        maxParts: MAX_PARTS,
      });
      const answer = await store(request, parsed.post, parsed.patch, parsed.feedback);
      for (const r of parsed.rejected) answer.rejected.push({ id: null, errors: [r.error] });
      return reply.status(202).send(answer);
    });

    ingest.post('/runs/batch', admitted, async (request, reply) => {
      const body = object(request.body);
      return reply.status(202).send(await store(request, list(body.post), list(body.patch)));
    });

    ingest.post('/runs', admitted, async (request, reply) => {
      return reply.status(202).send(await store(request, [object(request.body)], []));
    });

    ingest.patch<{ Params: { run_id: string } }>('/runs/:run_id', admitted, async (request, reply) => {
      const run = { ...object(request.body), id: request.params.run_id };
      return reply.status(202).send(await store(request, [], [run]));
    });

    ingest.post('/feedback', admitted, async (request, reply) => {
      const feedback = object(request.body);
      const answer = await store(request, [], [], [feedback]);
      // One feedback: its refusal is the request's (a 4xx the SDK does not retry).
      if (answer.rejected.length) throw new BadRequestError(answer.rejected[0]!.errors.join('; '));
      return reply.status(201).send(answer);
    });
  });
}
