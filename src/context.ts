import type { Config } from './config.js';
import type { AccessTokens } from './auth/access-token.js';
import type { ClickHouseStore } from './stores/clickhouse.js';
import type { PostgresStore } from './stores/postgres.js';
import type { QueueStore } from './stores/queue.js';

/** What every route and service is handed: the frozen config and the open stores. */
export type AppContext = Readonly<{
  config: Config;
  pg: PostgresStore;
  ch: ClickHouseStore;
  queue: QueueStore;
  tokens: AccessTokens;
}>;
