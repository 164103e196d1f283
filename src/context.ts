import type { Config } from './config.js';
import type { AccessTokens } from './auth/access-token.js';
import type { ClickHouseStore } from './stores/clickhouse.js';
import type { PostgresStore } from './stores/postgres.js';
import type { QueueStore } from './stores/queue.js';
import type { SpanWriter } from './traces/span-writer.js';
import type { LoopWatch } from './health/loop-watch.js';
import type { SecretBox } from './secrets/secret-box.js';

/**
 * What every route and service is handed: the frozen config, the open stores, and the process's one
 * span writer (its group commit and bounded queue are per process: the api and the web app's
 * /app-api share it), and the process's watch on its event loop.
 */
export type AppContext = Readonly<{
  config: Config;
  pg: PostgresStore;
  ch: ClickHouseStore;
  queue: QueueStore;
  tokens: AccessTokens;
  spanWriter: SpanWriter;
  /** Whether the process's event loop was blocked past its bound (`/healthz`). */
  loopWatch: LoopWatch;
  /** Seals and opens tenant secrets at rest (LLM provider keys). */
  secrets: SecretBox;
}>;
