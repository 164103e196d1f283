import type { FastifyInstance } from 'fastify';
import type { AppContext } from './context.js';
import { createServer } from './http.js';
import { registerOpenApi } from './openapi.js';
import { registerRateLimits } from './rate-limits.js';
import { registerApiSecurityHeaders } from './security-headers.js';
import { registerHealthRoutes } from './health/routes.js';
import { registerMetrics } from './health/metrics.js';
import { registerWorkspaceRoutes } from './workspaces/routes.js';
import { registerProjectRoutes } from './projects/routes.js';
import { registerApiKeyRoutes } from './api-keys/routes.js';
import { registerTraceRoutes } from './traces/routes.js';
import { textIndexLagSeconds } from './traces/text-index.js';
import { registerSqlRoutes } from './sql/routes.js';
import { registerDashboardRoutes } from './dashboards/routes.js';
import { registerWidgetDataRoutes } from './widgets/routes.js';
import { registerAlertRoutes } from './alerts/routes.js';
import { registerDetectorRoutes } from './detectors/routes.js';
import { registerSignalRoutes } from './signals/routes.js';
import { registerDatasetRoutes } from './datasets/routes.js';
import { registerEvaluationRoutes } from './evaluations/routes.js';
import { registerModelPriceRoutes } from './model-prices/routes.js';
import { registerScoreRoutes } from './scores/routes.js';
import { registerLlmConnectionRoutes } from './llm-connections/routes.js';
import { registerExportRoutes } from './exports/routes.js';
import { registerEvaluatorRoutes } from './evaluators/routes.js';
import { registerEvaluatorAgreementRoutes } from './evaluators/agreement-routes.js';
import { registerPromptRoutes } from './prompts/routes.js';
import { registerControlRoutes } from './controls/routes.js';
import { registerAnnotationRoutes } from './annotation/routes.js';
import { registerCommentRoutes } from './comments/routes.js';
import { registerIdempotency } from './idempotency/plugin.js';
import { LANGSMITH_PREFIX, registerLangsmithRoutes } from './protocols/langsmith/routes.js';
import { registerLangfuseRoutes } from './protocols/langfuse/routes.js';
import { shareSpanPartsSweeper } from './protocols/span-parts.js';

export const PUBLIC_PREFIX = '/api/v1/public';

/**
 * The Langfuse SDK posts its OTLP export to `{baseUrl}/api/public/otel/v1/traces` with Basic auth
 * (docs/integrations/langfuse.md): that path is our OTLP route under another name, so the same
 * handler, parsers and span writer serve it (one writer per process keeps ingest exactly-once).
 */
export const LANGFUSE_OTLP_PATH = '/api/public/otel/v1/traces';

export function langfuseOtlpAlias(url: string): string {
  if (!url.startsWith(LANGFUSE_OTLP_PATH)) return url;
  const rest = url.slice(LANGFUSE_OTLP_PATH.length);
  return rest === '' || rest[0] === '?' || rest === '/' ? `${PUBLIC_PREFIX}/otel/v1/traces${rest}` : url;
}

/** The API process's HTTP surface. No I/O here: the stores arrive open in `ctx`. */
export function buildApiApp(ctx: AppContext): FastifyInstance {
  const app = createServer({
    logLevel: ctx.config.logLevel,
    trustProxy: ctx.config.trustProxy,
    rewriteUrl: langfuseOtlpAlias,
  });
  registerHealthRoutes(app, ctx);
  registerMetrics(app, 'api', {
    token: ctx.config.metricsToken,
    spanWriter: ctx.spanWriter,
    textIndexLagSeconds: () => textIndexLagSeconds(ctx.ch),
  });
  registerApiSecurityHeaders(app, ctx.config);
  registerOpenApi(app, PUBLIC_PREFIX, ctx.config.baseUrl);
  registerRateLimits(app, ctx.config);
  app.register(async (api) => registerPublicRoutes(api, ctx), { prefix: PUBLIC_PREFIX });
  // Another product's protocol, outside the public prefix and its OpenAPI document (docs/langsmith-protocol.md).
  app.register(async (langsmith) => registerLangsmithRoutes(langsmith, ctx), { prefix: LANGSMITH_PREFIX });
  // Another product's protocol at the root, where its SDKs look (quality.md §5).
  registerLangfuseRoutes(app, ctx);
  // Both protocols' span pieces settle through one sweeper per process (src/protocols/span-parts.ts).
  let releaseSweeper: (() => Promise<void>) | undefined;
  app.addHook('onReady', async () => {
    releaseSweeper = shareSpanPartsSweeper(ctx, (error) =>
      app.log.error({ err: error }, 'settling span parts failed; the next sweep retries'),
    );
  });
  app.addHook('onClose', async () => {
    await releaseSweeper?.();
  });
  return app;
}

/**
 * Every public route. The web process mounts the same set under `/app-api`, authenticated by its
 * session cookie (src/web/app-api.ts), so the browser calls the public API on its own origin.
 */
export function registerPublicRoutes(api: FastifyInstance, ctx: AppContext): void {
  // First: creates opt in by route config (docs/idempotency.md), in both mounts of these routes.
  registerIdempotency(api, ctx);
  registerWorkspaceRoutes(api, ctx);
  registerProjectRoutes(api, ctx);
  registerApiKeyRoutes(api, ctx);
  registerTraceRoutes(api, ctx);
  registerSqlRoutes(api, ctx);
  registerDashboardRoutes(api, ctx);
  registerWidgetDataRoutes(api, ctx);
  registerAlertRoutes(api, ctx);
  registerDetectorRoutes(api, ctx);
  registerSignalRoutes(api, ctx);
  registerDatasetRoutes(api, ctx);
  registerEvaluationRoutes(api, ctx);
  registerModelPriceRoutes(api, ctx);
  registerScoreRoutes(api, ctx);
  registerLlmConnectionRoutes(api, ctx);
  registerExportRoutes(api, ctx);
  registerEvaluatorRoutes(api, ctx);
  registerEvaluatorAgreementRoutes(api, ctx);
  registerPromptRoutes(api, ctx);
  registerControlRoutes(api, ctx);
  registerAnnotationRoutes(api, ctx);
  registerCommentRoutes(api, ctx);
}
