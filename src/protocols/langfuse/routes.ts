import crypto from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { basicApiKey, bearerToken, resolvePrincipal, type ApiKeyPrincipal } from '../../auth/principal.js';
import {
  AppError,
  BadRequestError,
  isStoreUnreachable,
  RequestValidationError,
  TooManyRequestsError,
  UnauthorizedError,
} from '../../errors.js';
import { listScores, writeScores, type Score } from '../../scores/service.js';
import {
  createVersion,
  fetchVersion,
  getVersion,
  listPrompts,
  setLabels,
  type PromptVersion,
} from '../../prompts/service.js';
import { admitIngest, countIngestBody, releaseIngest } from '../../traces/ingest-admission.js';
import { storeSpanParts, type SpanPart } from '../span-parts.js';
import { checkIngestQuotas } from '../../controls/quotas.js';
import { envelopeOf, mapEvent, scoreOf } from './events.js';

/**
 * The Langfuse public API (quality.md §5; docs/integrations/langfuse-api.md) at the root of the API
 * origin, where the Langfuse SDKs append `/api/public/...` to their `baseUrl`. It is another
 * product's protocol, spoken as its SDKs expect: not part of Sightline's OpenAPI document (routes
 * outside `/api/v1/public` are hidden from it), its errors `{message, error}` as Langfuse's are.
 *
 * Auth: `Basic base64(publicKey:secretKey)`, the secret key a Sightline API key (the public key is
 * free text). `Bearer <API key>` (Langfuse's browser client sends its public key so) may only send
 * scores.
 */

/** The SDK caps a batch at ~2.5 MB and an event at 1 MB; Langfuse takes up to ~4.5 MB. */
export const MAX_LANGFUSE_BODY_BYTES = 5 * 1024 * 1024;
/** Events per ingestion request at most (the native ingest's span cap). */
export const MAX_LANGFUSE_EVENTS = 10_000;

const ERROR_NAMES: Record<number, string> = {
  400: 'InvalidRequestError',
  401: 'UnauthorizedError',
  403: 'AccessDeniedError',
  404: 'LangfuseNotFoundError',
  405: 'MethodNotAllowedError',
  413: 'InvalidRequestError',
  415: 'InvalidRequestError',
  429: 'TooManyRequestsError',
  503: 'ServiceUnavailableError',
};

declare module 'fastify' {
  interface FastifyRequest {
    langfuse?: { key: ApiKeyPrincipal; scoresOnly: boolean };
  }
}

export function registerLangfuseRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.register(
    async (lf) => {
      lf.setErrorHandler(langfuseError);
      lf.setNotFoundHandler((_request, reply) =>
        reply.status(404).send({ message: 'Not Found', error: ERROR_NAMES[404] }),
      );

      lf.get('/health', async () => ({ status: 'OK', version: '3.0.0' }));

      const authed = { onRequest: langfuseAuth(ctx) };

      // Admitted into the span writer's bounded queue like native ingest (429/503 with Retry-After).
      const admitted = {
        onRequest: [langfuseAuth(ctx), checkIngestQuotas(ctx), admitIngest(ctx.spanWriter, MAX_LANGFUSE_BODY_BYTES)],
        preParsing: countIngestBody(ctx.spanWriter),
        onResponse: releaseIngest,
      };
      lf.post('/ingestion', { ...admitted, bodyLimit: MAX_LANGFUSE_BODY_BYTES }, async (request, reply) => {
        const { key, scoresOnly } = request.langfuse!;
        const body = request.body as { batch?: unknown } | null;
        if (!body || typeof body !== 'object' || !Array.isArray(body.batch))
          throw new BadRequestError('batch: the body is {batch: [events], metadata?}');
        if (body.batch.length > MAX_LANGFUSE_EVENTS)
          throw new BadRequestError(`batch: at most ${MAX_LANGFUSE_EVENTS} events per request; split the batch`);
        return reply.status(207).send(await ingest(ctx, key, scoresOnly, body.batch));
      });

      lf.post('/scores', authed, async (request) => {
        const { key } = request.langfuse!;
        const body = request.body as Record<string, unknown> | null;
        if (!body || typeof body !== 'object' || Array.isArray(body))
          throw new BadRequestError('the body is one score object');
        let native: Record<string, unknown>;
        try {
          native = scoreOf(body);
        } catch (error) {
          throw new BadRequestError((error as Error).message);
        }
        native.score_id ??= crypto.randomUUID();
        const result = await writeScores(ctx, key, [native], { source: 'api' });
        if (result.rejected.length) throw new BadRequestError(result.rejected[0]!.errors.join('; '));
        return { id: result.scores[0]!.score_id };
      });

      lf.get('/scores', authed, async (request) => {
        const { key } = request.langfuse!;
        const q = request.query as Record<string, string | undefined>;
        const { page, limit } = paging(q);
        const filters = {
          name: q.name || undefined,
          traceId: q.traceId || undefined,
          spanId: q.observationId || undefined,
          sessionId: q.sessionId || undefined,
          configId: q.configId || undefined,
          dataType: q.dataType ? langfuseDataTypeFilter(q.dataType) : undefined,
          createdAfterMs: q.fromTimestamp ? timeParam(q.fromTimestamp, 'fromTimestamp') : undefined,
          createdBeforeMs: q.toTimestamp ? timeParam(q.toTimestamp, 'toTimestamp') : undefined,
        };
        const found = await listScores(ctx, key.projectId, filters, limit, page - 1);
        return {
          data: found.data.map(langfuseScore),
          meta: { page, limit, totalItems: found.meta.total, totalPages: Math.ceil(found.meta.total / limit) },
        };
      });

      lf.get('/v2/prompts', authed, async (request) => {
        const { key } = request.langfuse!;
        const { page, limit } = paging(request.query as Record<string, string | undefined>);
        const found = await listPrompts(ctx.pg.pool, key.projectId, limit, page - 1);
        return {
          data: found.data.map((p) => ({
            name: p.name,
            type: p.type,
            versions: [p.latest_version],
            labels: p.labels,
            tags: [],
            lastUpdatedAt: p.updated_at,
            lastConfig: {},
          })),
          meta: { page, limit, totalItems: found.meta.total, totalPages: Math.ceil(found.meta.total / limit) },
        };
      });

      lf.get('/v2/prompts/:name', authed, async (request) => {
        const { key } = request.langfuse!;
        const name = promptName((request.params as { name: string }).name);
        const q = request.query as Record<string, string | undefined>;
        if (q.version !== undefined && q.label !== undefined)
          throw new BadRequestError('name a version or a label, not both');
        const version = q.version !== undefined ? versionParam(q.version) : undefined;
        // The SDKs' fetch before their calls: through the native fetch's read cache (src/prompts/read-cache.ts).
        const { answer } = await fetchVersion(ctx, key.projectId, name, {
          ...(version !== undefined ? { version } : {}),
          ...(q.label ? { label: q.label } : {}),
        });
        return langfusePrompt(answer, key.projectId);
      });

      lf.post('/v2/prompts', authed, async (request, reply) => {
        const { key } = request.langfuse!;
        const b = request.body as Record<string, unknown> | null;
        if (!b || typeof b !== 'object') throw new BadRequestError('the body is a prompt');
        const type = b.type === 'chat' ? 'chat' : 'text';
        if (typeof b.name !== 'string') throw new BadRequestError('name: a prompt needs a name');
        const name = promptName(b.name);
        let prompt: string | { role: string; content: string }[];
        if (type === 'text') {
          if (typeof b.prompt !== 'string') throw new BadRequestError('prompt: a text prompt is a string');
          prompt = b.prompt;
        } else {
          if (!Array.isArray(b.prompt)) throw new BadRequestError('prompt: a chat prompt is an array of messages');
          prompt = b.prompt.map((m: unknown, i) => {
            const msg = m as Record<string, unknown> | null;
            if (!msg || typeof msg.role !== 'string' || typeof msg.content !== 'string')
              throw new BadRequestError(
                `prompt[${i}]: Sightline keeps chat messages {role, content}; placeholders are not supported`,
              );
            return { role: msg.role, content: msg.content };
          });
        }
        const labels = Array.isArray(b.labels) ? b.labels.filter((l): l is string => typeof l === 'string') : [];
        for (const label of labels) checkLabel(label);
        const created = await createVersion(
          ctx,
          key.projectId,
          {
            name,
            type,
            prompt,
            config: b.config && typeof b.config === 'object' ? (b.config as Record<string, unknown>) : {},
            labels: labels.filter((l) => l !== 'latest'),
            commit_message: typeof b.commitMessage === 'string' ? b.commitMessage : null,
          },
          { createdBy: `api_key:${key.keyId}`, admin: false },
        );
        return reply.status(201).send(langfusePrompt(created, key.projectId));
      });

      lf.patch('/v2/prompts/:name/versions/:version', authed, async (request) => {
        const { key } = request.langfuse!;
        const params = request.params as { name: string; version: string };
        const name = promptName(params.name);
        const version = versionParam(params.version);
        const b = request.body as { newLabels?: unknown } | null;
        if (!b || !Array.isArray(b.newLabels) || !b.newLabels.every((l) => typeof l === 'string'))
          throw new BadRequestError('newLabels: an array of labels');
        const wanted = (b.newLabels as string[]).filter((l) => l !== 'latest');
        for (const label of wanted) checkLabel(label);
        // Langfuse adds the new labels to the version (moving them from others); the ones it has stay.
        const current = await getVersion(ctx.pg.pool, key.projectId, name, { version });
        const labels = [...new Set([...current.labels.filter((l) => l !== 'latest'), ...wanted])];
        const moved = await setLabels(ctx, key.projectId, name, version, labels, {
          createdBy: `api_key:${key.keyId}`,
          admin: false,
        });
        return langfusePrompt(moved, key.projectId);
      });
    },
    { prefix: '/api/public' },
  );
}

/** The events of one request: each answered alone, keyed by its envelope id (207). */
async function ingest(ctx: AppContext, key: ApiKeyPrincipal, scoresOnly: boolean, batch: unknown[]) {
  const successes: { id: string; status: number }[] = [];
  const errors: { id: string; status: number; message: string; error: string }[] = [];
  const fail = (id: string, status: number, message: string) =>
    errors.push({ id, status, message, error: ERROR_NAMES[status] ?? 'InvalidRequestError' });
  const parts: { id: string; part: SpanPart }[] = [];
  const scores: { id: string; score: Record<string, unknown> }[] = [];
  const receivedAt = Date.now();
  for (const raw of batch) {
    const envelope = envelopeOf(raw);
    if ('error' in envelope) {
      fail(envelope.id, 400, envelope.error);
      continue;
    }
    if (scoresOnly && envelope.type !== 'score-create') {
      fail(envelope.id, 403, 'a public key (Bearer) may only send scores; send Basic publicKey:secretKey');
      continue;
    }
    const mapped = mapEvent(envelope, receivedAt);
    if ('error' in mapped) fail(envelope.id, mapped.status, mapped.error);
    else if ('ignored' in mapped) successes.push({ id: envelope.id, status: 201 });
    else if ('part' in mapped) parts.push({ id: envelope.id, part: mapped.part });
    else {
      // A score without an id gets the envelope's: a re-sent event replaces its score.
      mapped.score.score_id ??= envelope.id;
      scores.push({ id: envelope.id, score: mapped.score });
    }
  }
  if (parts.length) {
    const stored = await storeSpanParts(
      ctx,
      key,
      parts.map((p) => p.part),
    );
    const bad = new Map(stored.rejected.map((r) => [r.index, r.errors.join('; ')]));
    parts.forEach((p, i) => {
      const message = bad.get(i);
      if (message) fail(p.id, 400, message);
      else successes.push({ id: p.id, status: 201 });
    });
  }
  if (scores.length) {
    const written = await writeScores(
      ctx,
      key,
      scores.map((s) => s.score),
      { source: 'api' },
    );
    const bad = new Map(written.rejected.map((r) => [r.index, r.errors.join('; ')]));
    scores.forEach((s, i) => {
      const message = bad.get(i);
      if (message) fail(s.id, 400, message);
      else successes.push({ id: s.id, status: 201 });
    });
  }
  return { successes, errors };
}

/** Basic publicKey:secretKey (secret = a Sightline API key), or Bearer <API key> for scores only. */
function langfuseAuth(ctx: AppContext) {
  return async function (request: FastifyRequest, _reply: FastifyReply) {
    const basic = basicApiKey(request);
    const token = basic ?? bearerToken(request);
    if (!token.startsWith('sl_'))
      throw new UnauthorizedError(
        "send 'Authorization: Basic base64(<public key>:<Sightline API key>)': the secret key is a Sightline API key",
      );
    const principal = await resolvePrincipal(ctx, token);
    if (principal.kind !== 'api_key') throw new UnauthorizedError();
    request.principal = principal;
    request.langfuse = { key: principal, scoresOnly: basic === undefined };
  };
}

/** Errors as Langfuse answers them: `{message, error}` (its SDKs show `message`). */
function langfuseError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  let status = 500;
  let message = 'internal server error';
  if (error instanceof RequestValidationError) {
    status = 400;
    message = error.issues.map((i) => JSON.stringify(i)).join('; ');
  } else if (error instanceof AppError) {
    status = error.status;
    message = error.detail;
  } else if (error instanceof SyntaxError) {
    status = 400;
    message = 'request body is not valid JSON';
  } else if (isStoreUnreachable(error)) {
    status = 503;
    message = 'a backing store is unavailable; retry later';
  } else {
    const s = (error as FastifyError).statusCode;
    if (typeof s === 'number' && s >= 400 && s < 500) {
      status = s;
      message = s === 413 ? 'request body is too large' : s === 415 ? 'send application/json' : 'bad request';
    } else request.log.error({ err: error }, 'unhandled error');
  }
  if (status === 401) reply.header('www-authenticate', 'Basic realm="Langfuse"');
  if (error instanceof TooManyRequestsError) reply.header('retry-after', String(error.retryAfterSeconds));
  else if (status === 503) reply.header('retry-after', '5');
  return reply
    .status(status)
    .send({ message, error: ERROR_NAMES[status] ?? (status >= 500 ? 'InternalServerError' : 'InvalidRequestError') });
}

function langfusePrompt(p: PromptVersion, projectId: string) {
  return {
    id: `${p.name}@${p.version}`,
    name: p.name,
    version: p.version,
    type: p.type,
    prompt: p.prompt,
    config: p.config,
    labels: p.labels,
    tags: [],
    commitMessage: p.commit_message,
    createdAt: p.created_at,
    updatedAt: p.created_at,
    createdBy: p.created_by,
    projectId,
    isActive: null,
    resolutionGraph: null,
  };
}

const DATA_TYPE_NAMES: Record<string, string> = { numeric: 'NUMERIC', categorical: 'CATEGORICAL', boolean: 'BOOLEAN' };

function langfuseScore(s: Score) {
  const langfuseType = s.metadata['langfuse.data_type'];
  const dataType = langfuseType ?? DATA_TYPE_NAMES[s.data_type] ?? 'NUMERIC';
  return {
    id: s.score_id,
    traceId: s.trace_id,
    observationId: s.span_id,
    sessionId: s.session_id,
    name: s.name,
    value: langfuseType ? null : s.value,
    stringValue: s.string_value,
    dataType,
    source: s.source === 'api' ? 'API' : s.source === 'evaluator' ? 'EVAL' : 'ANNOTATION',
    comment: s.comment,
    configId: s.config_id,
    metadata: s.metadata,
    environment: s.environment ?? 'default',
    timestamp: s.created_at,
    createdAt: s.created_at,
    updatedAt: s.updated_at,
    authorUserId: s.author_user_id,
  };
}

function langfuseDataTypeFilter(value: string): string {
  const t = DATA_TYPE_NAMES_REVERSE[value.toUpperCase()];
  if (!t) throw new BadRequestError('dataType: NUMERIC, CATEGORICAL or BOOLEAN');
  return t;
}
const DATA_TYPE_NAMES_REVERSE: Record<string, string> = {
  NUMERIC: 'numeric',
  CATEGORICAL: 'categorical',
  BOOLEAN: 'boolean',
};

function paging(q: Record<string, string | undefined>): { page: number; limit: number } {
  const page = q.page === undefined ? 1 : Number(q.page);
  const limit = q.limit === undefined ? 50 : Number(q.limit);
  if (!Number.isInteger(page) || page < 1 || page > 100_000) throw new BadRequestError('page: an integer from 1');
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new BadRequestError('limit: an integer from 1 to 100');
  return { page, limit };
}

function timeParam(value: string, field: string): number {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new BadRequestError(`${field}: an ISO date-time`);
  return ms;
}

function versionParam(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1 || n > 2_147_483_647)
    throw new BadRequestError('version: an integer from 1');
  return n;
}

/** The prompt name of a path (Fastify decodes `%2F` to `/`) or body, as the native routes check it. */
function promptName(name: string): string {
  if (name.length < 1 || name.length > 256) throw new BadRequestError('name: 1 to 256 characters');
  if (!name.split('/').every((part) => part.trim() !== ''))
    throw new BadRequestError('name: a prompt name has no empty folder: no leading, trailing or doubled `/`');
  return name;
}

function checkLabel(label: string): void {
  if (label === 'latest') return;
  if (!/^[a-z0-9_.-]{1,36}$/.test(label))
    throw new BadRequestError(`labels: '${label}': a label is 1-36 of a-z, 0-9, \`_\`, \`.\` and \`-\``);
}
