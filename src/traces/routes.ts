import zlib from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest, RequestPayload } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import {
  AppError,
  InternalError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  UnsupportedMediaTypeError,
  isQueryLimit,
  isStoreUnreachable,
} from '../errors.js';
import { apiKeyOf, authenticate, principalOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import { priceBookOf } from '../model-prices/pricing.js';
import { scoreSummaries, scoresOfSession, scoresOfTraces } from '../scores/service.js';
import { commentCount } from '../comments/service.js';
import { admitIngest, checkIngestProject, countIngestBody, ingesting, releaseIngest } from './ingest-admission.js';
import { MAX_SPANS_PER_REQUEST, validateSpans } from './span-input.js';
import { IsoDateOrDateTime, isoToEpochMs, Pagination, ProjectQuery } from '../edge-schemas.js';
import { parseFilters } from './filters.js';
import { TRACE_SORT_FIELDS, type TraceSortField } from './list-query.js';
import {
  countOtlpSpans,
  decodeOtlpJson,
  decodeOtlpProtobuf,
  encodeOtlpProtobufResponse,
  otlpJsonResponse,
  otlpToSpans,
} from './otlp.js';
import {
  getSession,
  getTrace,
  ingestControlsOf,
  ingestSpans,
  listSessions,
  listTraces,
  storeSpans,
} from './service.js';
import { checkIngestQuotas } from '../controls/quotas.js';
import { MAX_TEXT_QUERY_LENGTH, MAX_TEXT_TERMS, parseTextQuery, TEXT_SCOPES, type TextSearch } from './text-search.js';
import {
  IngestAnswer,
  OtlpAnswer,
  SessionDetailAnswer,
  SessionListAnswer,
  TraceDetailAnswer,
  TraceListAnswer,
} from './answers.js';

/** docs/spans.md: a request body holds at most 10 MiB (413 beyond). */
export const MAX_INGEST_BODY_BYTES = 10 * 1024 * 1024;

/** Query booleans the way pydantic reads them (true/false, 1/0, yes/no, on/off). */
const QueryBoolean = z.string().transform((v, ctx) => {
  const lowered = v.trim().toLowerCase();
  if (['true', '1', 'yes', 'on', 't', 'y'].includes(lowered)) return true;
  if (['false', '0', 'no', 'off', 'f', 'n'].includes(lowered)) return false;
  ctx.addIssue({ code: 'custom', message: 'Input should be a valid boolean, unable to interpret input' });
  return z.NEVER;
});

/** `text_query` (docs/traces.md, "Text search"): 1 to 512 characters after trimming, parsed into its terms. */
const TextQuery = z
  .string()
  .trim()
  .min(1)
  .max(MAX_TEXT_QUERY_LENGTH)
  .transform((v, ctx) => {
    const terms = parseTextQuery(v);
    if (terms.length === 0)
      ctx.addIssue({ code: 'custom', message: 'Text query should contain a word or a quoted phrase' });
    if (terms.length > MAX_TEXT_TERMS)
      ctx.addIssue({ code: 'custom', message: `Text query should have at most ${MAX_TEXT_TERMS} words or phrases` });
    return terms;
  })
  .describe(
    'full-text search over span input, output and error message (docs/traces.md, "Text search"): 1 to 512 characters after trimming; words separated by spaces (all required, each in some span of the trace) and "quoted phrases" (those characters in that order); case-insensitive where the script has case, any script; items found carry `text_match`',
  );
const TextScope = z
  .enum(TEXT_SCOPES)
  .default('all')
  .describe(
    'the span fields `text_query` searches: `all` (default: input, output and error message), `input`, `output` or `error` (the error message)',
  );

const textOf = (terms: string[] | undefined, scope: TextSearch['scope']): TextSearch | undefined =>
  terms === undefined ? undefined : { terms, scope };

const ListTracesQuery = ProjectQuery.extend({
  ...Pagination.shape,
  start_after: IsoDateOrDateTime.optional(),
  end_before: IsoDateOrDateTime.optional(),
  include_evaluations: QueryBoolean.optional(),
  name: z.string().max(1024).optional(),
  user_id: z.string().max(1024).optional(),
  search_query: z.string().max(1024).optional(),
  filters: z.string().optional(),
  text_query: TextQuery.optional(),
  text_scope: TextScope,
  sort: z
    .enum(Object.keys(TRACE_SORT_FIELDS) as [TraceSortField, ...TraceSortField[]])
    .optional()
    .describe('sort the list by this field (ties newest first); default newest first (start_time)'),
  order: z.enum(['desc', 'asc']).optional().describe('with `sort`: descending (default) or ascending'),
});

const SessionsQuery = ProjectQuery.extend({
  ...Pagination.shape,
  text_query: TextQuery.optional(),
  text_scope: TextScope,
  filters: z
    .string()
    .optional()
    .describe('the predicate table of the trace list (docs/filters.md); a session matches when one of its traces does'),
});

const IngestBody = z.object({ spans: z.array(z.unknown()).min(1), project_id: z.string().nullish() });

export function registerTraceRoutes(app: FastifyInstance, ctx: AppContext): void {
  // The process's one writer (src/runtime.ts), closed at stop after the servers.
  const writer = ctx.spanWriter;
  const prices = priceBookOf(ctx.pg);
  const controls = ingestControlsOf(ctx);
  const r = typed(app);
  const reader = { onRequest: authenticate(ctx, 'any') };

  // Ingest: native JSON and OTLP/HTTP, in a child context of their own for the parsers and hooks.
  // Admission to the bounded queue comes after authentication and before the body is read.
  const admitted = {
    onRequest: [authenticate(ctx, 'api_key'), checkIngestQuotas(ctx), admitIngest(writer, MAX_INGEST_BODY_BYTES)],
    onResponse: releaseIngest,
  };
  // OTLP exporters that only do Basic auth (and the Langfuse SDK) send the API key as its password.
  const otlpAdmitted = {
    ...admitted,
    onRequest: [
      authenticate(ctx, 'api_key', { basic: true }),
      checkIngestQuotas(ctx),
      admitIngest(writer, MAX_INGEST_BODY_BYTES),
    ],
  };
  app.register(async (ingest) => {
    ingest.addHook('preParsing', gunzipBody);
    ingest.addHook('preParsing', countIngestBody(writer));
    // OTLP/HTTP protobuf arrives as bytes; JSON goes through Fastify's parser.
    ingest.addContentTypeParser(
      ['application/x-protobuf', 'application/protobuf'],
      { parseAs: 'buffer', bodyLimit: MAX_INGEST_BODY_BYTES },
      (_req, body, done) => done(null, body),
    );
    const ri = typed(ingest);

    ri.post(
      '/traces',
      {
        ...admitted,
        bodyLimit: MAX_INGEST_BODY_BYTES,
        schema: { querystring: ProjectQuery, body: IngestBody, response: { 200: IngestAnswer } },
      },
      async (request) => {
        checkIngestProject(request, request.query.project_id, request.body.project_id);
        if (request.body.spans.length > MAX_SPANS_PER_REQUEST) {
          throw new PayloadTooLargeError(`at most ${MAX_SPANS_PER_REQUEST} spans per request; split the batch`);
        }
        return storing(request, () =>
          ingesting(writer, request, () =>
            ingestSpans(writer, apiKeyOf(request), request.body.spans, prices, controls),
          ),
        );
      },
    );

    ingest.post(
      '/otel/v1/traces',
      {
        ...otlpAdmitted,
        bodyLimit: MAX_INGEST_BODY_BYTES,
        schema: { querystring: ProjectQuery, response: { 200: OtlpAnswer } },
      },
      async (request, reply) => {
        checkIngestProject(request, (request.query as z.infer<typeof ProjectQuery>).project_id);
        const protobuf = Buffer.isBuffer(request.body);
        const decoded = protobuf ? decodeOtlpProtobuf(request.body as Buffer) : decodeOtlpJson(request.body ?? {});
        const total = countOtlpSpans(decoded);
        if (total > MAX_SPANS_PER_REQUEST)
          throw new PayloadTooLargeError(`at most ${MAX_SPANS_PER_REQUEST} spans per request; split the batch`);
        const { accepted, rejected } = validateSpans(otlpToSpans(decoded));
        const { sampledOut } = await storing(request, () =>
          ingesting(writer, request, () => storeSpans(writer, apiKeyOf(request), accepted, prices, controls)),
        );
        // Partial success has no field for sampling: its message says it (quality.md §6), after any rejections.
        const message = [
          ...rejected.slice(0, 5).map((x) => `span ${x.span_id ?? x.index}: ${x.errors.join('; ')}`),
          ...(sampledOut ? [`${sampledOut} span${sampledOut === 1 ? '' : 's'} sampled out`] : []),
        ].join(' | ');
        if (protobuf)
          return reply.type('application/x-protobuf').send(encodeOtlpProtobufResponse(rejected.length, message));
        return reply.type('application/json').send(otlpJsonResponse(rejected.length, message));
      },
    );
  });

  r.get(
    '/traces',
    { ...reader, schema: { querystring: ListTracesQuery, response: { 200: TraceListAnswer } } },
    async (request) => {
      const q = request.query;
      const filters = parseFilters(q.filters);
      const scope = await resolveReadProject(ctx, principalOf(request), q.project_id);
      return answering(request, 'failed to list traces', async () =>
        // A `signal_id` filter on a merge target matches its sources' traces too: the service asks signals.
        withScoreSummaries(
          ctx,
          scope.projectId,
          await listTraces(ctx, {
            projectId: scope.projectId,
            limit: q.limit,
            page: q.page,
            startAfter: q.start_after === undefined ? undefined : isoToEpochMs(q.start_after),
            endBefore: q.end_before === undefined ? undefined : isoToEpochMs(q.end_before),
            includeEvaluations: q.include_evaluations ?? false,
            name: q.name || undefined,
            userId: q.user_id || undefined,
            searchQuery: q.search_query || undefined,
            sort: q.sort ? { field: q.sort, direction: q.order ?? 'desc' } : undefined,
            filters,
            text: textOf(q.text_query, q.text_scope),
          }),
        ),
      );
    },
  );

  r.get(
    '/traces/:trace_id',
    {
      ...reader,
      schema: {
        params: z.object({ trace_id: z.string().min(1).max(128) }),
        querystring: ProjectQuery,
        response: { 200: TraceDetailAnswer },
      },
    },
    async (request) => {
      const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id);
      return answering(request, 'failed to read the trace', async () => {
        const trace = await getTrace(ctx, scope.projectId, request.params.trace_id);
        return {
          ...trace,
          scores: await scoresOfTraces(ctx, scope.projectId, [trace.trace_id]),
          comment_count: await commentCount(ctx, scope.projectId, trace.trace_id),
        };
      });
    },
  );

  r.get(
    '/sessions',
    { ...reader, schema: { querystring: SessionsQuery, response: { 200: SessionListAnswer } } },
    async (request) => {
      const q = request.query;
      const filters = parseFilters(q.filters);
      const scope = await resolveReadProject(ctx, principalOf(request), q.project_id);
      const where = { filters, text: textOf(q.text_query, q.text_scope) };
      return answering(request, 'failed to list sessions', () =>
        listSessions(ctx, scope.projectId, q.limit, q.page, where),
      );
    },
  );

  r.get(
    '/sessions/:session_id',
    {
      ...reader,
      schema: {
        params: z.object({ session_id: z.string().min(1).max(1024) }),
        querystring: ProjectQuery,
        response: { 200: SessionDetailAnswer },
      },
    },
    async (request) => {
      const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id);
      return answering(request, 'failed to read the session', async () => {
        const session = await getSession(ctx, scope.projectId, request.params.session_id);
        return { ...session, scores: await scoresOfSession(ctx, scope.projectId, session.session_id) };
      });
    },
  );
}

/** The list's items with their scores' summaries (quality.md §1): one read for the page's traces. */
async function withScoreSummaries<T extends { trace_id: string }>(
  ctx: AppContext,
  projectId: string,
  page: { data: T[]; meta: { page: number; limit: number; total: number } },
) {
  const summaries = await scoreSummaries(
    ctx,
    projectId,
    page.data.map((t) => t.trace_id),
  );
  return { ...page, data: page.data.map((t) => ({ ...t, scores: summaries.get(t.trace_id) ?? [] })) };
}

/**
 * `Content-Encoding: gzip` bodies (OTLP exporters may compress) are inflated before parsing; the
 * body limit then applies to the inflated size, so a small bomb can't grow past 10 MiB.
 */
async function gunzipBody(
  request: FastifyRequest,
  _reply: FastifyReply,
  payload: RequestPayload,
): Promise<RequestPayload> {
  const encoding = String(request.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  if (encoding === '' || encoding === 'identity') return payload;
  if (encoding !== 'gzip')
    throw new UnsupportedMediaTypeError(`unsupported content encoding '${encoding}'; send identity or gzip`);
  const gunzip = zlib.createGunzip();
  let encoded = 0;
  payload.on('data', (chunk: Buffer) => {
    encoded += chunk.length;
    (gunzip as unknown as { receivedEncodedLength: number }).receivedEncodedLength = encoded;
  });
  // Fastify's body reader answers a stream error with its statusCode: bad gzip is the client's fault.
  // The code names it in the error map (errors.ts), which answers 400 `{detail}`.
  gunzip.on('error', (error: Error & { statusCode?: number; code?: string }) => {
    error.statusCode = 400;
    error.code = 'SL_INVALID_GZIP';
  });
  payload.pipe(gunzip);
  return gunzip;
}

/** A store failure while storing spans: 503 so the producer retries (nothing was acknowledged). */
async function storing<T>(request: FastifyRequest, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof AppError) throw error;
    request.log.error({ err: error }, 'storing spans failed');
    throw new ServiceUnavailableError('the spans could not be stored; retry the request');
  }
}

/**
 * A read that failed in the store: 503 when unreachable, 400 when it hit a query limit (the services
 * name the limit; errors.ts answers any they missed), else the spec's 500 detail.
 */
async function answering<T>(request: FastifyRequest, detail: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof AppError || isStoreUnreachable(error) || isQueryLimit(error)) throw error;
    request.log.error({ err: error }, detail);
    throw new InternalError(detail);
  }
}
