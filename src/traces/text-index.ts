import type { ClickHouseStore } from '../stores/clickhouse.js';
import type { PostgresStore } from '../stores/postgres.js';
import { MIN_TOKEN_BYTES, type TextIndexState, type TextSearch } from './text-search.js';
import { visibleStampsUpTo } from './visible-stamps.js';

/**
 * The text indexer (clickhouse/0012_text_index.sql; docs/traces.md, "Text search"): off the insert
 * path, a pass reads the spans stored since the watermark (by `ingested_at`, which the minmax index
 * of 0003 makes a read of the recent granules only), checks the hours they belong to for two traces
 * sharing a key, writes their postings and the project's tokens, and then stores the new watermark. A
 * search scans the spans above the watermark, so nothing a pass has not reached is ever missed, and
 * a pass that fails half-way is simply done again (postings and tokens fold on merge: writing one
 * twice changes nothing).
 *
 * The pass stops `lagMs` short of the engine's clock and before the start of any insert into `spans`
 * still running (visibleStampsUpTo, as the rollup sealer): a span's `ingested_at` is stamped when its
 * insert starts and it is visible when the insert ends, so a span stamped just before a pass may not
 * be readable yet. Until issue 36 the lag alone (30 s) stood for that check; every search scans the
 * text of the spans above the watermark, so the shorter lag is that much less to scan. A pass covers
 * at most about `maxSpans` spans (an insert's spans share one stamp and go together), so a backlog (a
 * first pass over an existing database) is worked off in bounded chunks, oldest first, one chunk a
 * pass.
 */

export const TEXT_INDEX_LAG_MS = 5_000;
export const TEXT_INDEX_EVERY_MS = 5_000;
/**
 * At most this many spans a pass. Each of a pass's statements reads their whole text (a realistic
 * agent span carries ~4.7 KB): 10,000 keeps one under a second or so, which matters most on the
 * embedded engine, where the API's queries wait for it to finish.
 */
export const TEXT_INDEX_MAX_SPANS = 10_000;

/** Each field's distinct tokens, with the field's bit (1 input, 2 output, 4 error message). */
const FIELD_TOKENS = `arrayConcat(
    arrayMap(t -> (t, toUInt8(1)), arrayDistinct(splitByNonAlpha(lowerUTF8(ifNull(input, ''))))),
    arrayMap(t -> (t, toUInt8(2)), arrayDistinct(splitByNonAlpha(lowerUTF8(ifNull(output, ''))))),
    arrayMap(t -> (t, toUInt8(4)), arrayDistinct(splitByNonAlpha(lowerUTF8(error_message)))))`;

/** The spans of a pass: stored in (from, to] (epoch ms of `ingested_at`), of live projects. */
const PASS_SPANS = `ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC')
    AND ingested_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')
    AND project_id IN {projects:Array(String)}`;

/** Enough memory for a chunk's GROUP BY, spilling to disk past it rather than failing. */
const PASS_SETTINGS = 'SETTINGS max_bytes_before_external_group_by = 1000000000';

export type TextIndexPass = {
  /** The watermark before and after the pass (epoch ms); equal when there was nothing to do. */
  from: number;
  to: number;
  spans: number;
  /** Wall time of the pass, ms. */
  ms: number;
  /** Hours of a project found holding two traces with one key (expected 0). */
  collisions: number;
  /** Whether the pass reached `lagMs` ago (else a backlog remains for the next passes). */
  caughtUp: boolean;
  /** Wall ms of the pass's writes: postings, tokens, the key check (the bench reports them). */
  steps: { postings: number; tokens: number; check: number };
};

export type TextIndexOptions = { lagMs?: number; maxSpans?: number };

export async function runTextIndexPass(
  ctx: { ch: ClickHouseStore; pg: PostgresStore },
  options: TextIndexOptions = {},
): Promise<TextIndexPass> {
  const started = performance.now();
  const lag = options.lagMs ?? TEXT_INDEX_LAG_MS;
  const max = options.maxSpans ?? TEXT_INDEX_MAX_SPANS;
  const [mark] = await ctx.ch.rows<{ w: string }>({
    query: `SELECT toUnixTimestamp64Milli(max(watermark)) AS w FROM text_index_marks WHERE project_id = ''`,
  });
  const from = Number(mark!.w);
  const { upper } = await visibleStampsUpTo(ctx.ch, lag);
  const steps = { postings: 0, tokens: 0, check: 0 };
  const timed = async <T>(step: keyof typeof steps, fn: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    try {
      return await fn();
    } finally {
      steps[step] += performance.now() - t;
    }
  };
  const done = (to: number, spans: number, collisions = 0): TextIndexPass => ({
    from,
    to,
    spans,
    collisions,
    steps,
    caughtUp: to >= upper,
    ms: performance.now() - started,
  });
  if (upper <= from) return { ...done(from, 0), caughtUp: true };
  // The chunk's end: the stamp of the max-th span after the watermark, or the upper bound.
  const [nth] = await ctx.ch.rows<{ at: string }>({
    query: `SELECT toUnixTimestamp64Milli(ingested_at) AS at FROM spans
      WHERE ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ingested_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')
      ORDER BY ingested_at LIMIT 1 OFFSET {skip:UInt64}`,
    query_params: { from, to: upper, skip: max - 1 },
  });
  const to = nth ? Number(nth.at) : upper;
  // Deleted projects are not indexed (their spans wait for the purge: src/deletions).
  const { rows: live } = await ctx.pg.pool.query<{ id: string }>(
    'SELECT id::text AS id FROM projects WHERE deleted_at IS NULL',
  );
  const params = { from, to, projects: live.map((r) => r.id) };
  const [count] = await ctx.ch.rows<{ n: string }>({
    query: `SELECT count() AS n FROM spans WHERE ${PASS_SPANS}`,
    query_params: params,
  });
  const spans = Number(count!.n);
  let collisions = 0;
  if (spans > 0) {
    // Two traces of one project and hour with one key: the search scans that hour instead. Every
    // trace of an hour the pass writes is compared, so a pair is found when the later one is indexed;
    // before the postings are written, so a search never trusts a colliding hour's postings.
    const found = await timed('check', () =>
      ctx.ch.rows<{ project_id: string; hour: string; ttl: number }>({
        query: `SELECT project_id, toUnixTimestamp(trace_start_hour) AS hour, max(ttl_days) AS ttl FROM (
  SELECT project_id, trace_start_hour, max(ttl_days) AS ttl_days FROM traces
  WHERE (project_id, trace_start_hour) IN (SELECT DISTINCT project_id, trace_start_hour FROM spans WHERE ${PASS_SPANS})
  GROUP BY project_id, trace_start_hour, sipHash64(trace_id) HAVING uniqExact(trace_id) > 1
) GROUP BY project_id, trace_start_hour`,
        query_params: params,
      }),
    );
    collisions = found.length;
    if (found.length) {
      await ctx.ch.client.insert({
        table: 'text_index_collisions',
        values: found.map((c) => ({ project_id: c.project_id, trace_start_hour: Number(c.hour), ttl_days: c.ttl })),
        format: 'JSONEachRow',
      });
    }
    await timed('postings', () =>
      ctx.ch.client.command({
        query: `INSERT INTO text_postings (project_id, token, trace_start_hour, trace_key, fields, ttl_days)
SELECT project_id, tf.1 AS token, trace_start_hour, sipHash64(trace_id) AS trace_key, groupBitOr(tf.2) AS fields, max(ttl_days) AS ttl_days
FROM spans ARRAY JOIN ${FIELD_TOKENS} AS tf
WHERE ${PASS_SPANS} AND length(tf.1) >= ${MIN_TOKEN_BYTES}
GROUP BY project_id, token, trace_start_hour, trace_key
${PASS_SETTINGS}`,
        query_params: params,
      }),
    );
    await timed('tokens', () =>
      ctx.ch.client.command({
        query: `INSERT INTO text_tokens (project_id, token, last_hour, ttl_days)
SELECT project_id, token, max(trace_start_hour) AS last_hour, max(ttl_days) AS ttl_days
FROM spans ARRAY JOIN arrayDistinct(splitByNonAlpha(lowerUTF8(concat(ifNull(input, ''), ' ', ifNull(output, ''), ' ', error_message)))) AS token
WHERE ${PASS_SPANS} AND length(token) >= ${MIN_TOKEN_BYTES}
GROUP BY project_id, token
${PASS_SETTINGS}`,
        query_params: params,
      }),
    );
  }
  await ctx.ch.client.command({
    query: `INSERT INTO text_index_marks (project_id, watermark) VALUES ('', fromUnixTimestamp64Milli({to:Int64}, 'UTC'))`,
    query_params: { to },
  });
  return done(to, spans, collisions);
}

/**
 * Seconds from the engine's clock back to the indexer's watermark: a span stored that long ago or
 * less is not in the postings yet (a search still finds it, by a scan). Null before the first pass.
 */
export async function textIndexLagSeconds(ch: ClickHouseStore): Promise<number | null> {
  const [row] = await ch.rows<{ lag: number | null }>({
    query: `SELECT if(count() = 0, NULL, dateDiff('millisecond', max(watermark), now64(3)) / 1000) AS lag
              FROM text_index_marks WHERE project_id = ''`,
  });
  return row?.lag ?? null;
}

/** Passes until the indexer has caught up with `lagMs` ago (tests, the bench, a first start). */
export async function catchUpTextIndex(
  ctx: { ch: ClickHouseStore; pg: PostgresStore },
  options: TextIndexOptions = {},
): Promise<TextIndexPass[]> {
  const passes: TextIndexPass[] = [];
  for (;;) {
    const pass = await runTextIndexPass(ctx, options);
    passes.push(pass);
    if (pass.caughtUp) return passes;
  }
}

/**
 * The index's state a search of `projectId` needs (src/traces/text-search.ts `TextIndexState`): one
 * small read per request, so the search's conditions are constants.
 */
export async function textIndexState(ch: ClickHouseStore, projectId: string): Promise<TextIndexState> {
  const [row] = await ch.rows<{ w: string; hours: number[] }>({
    query: `SELECT (SELECT toUnixTimestamp64Milli(max(watermark)) FROM text_index_marks WHERE project_id = '') AS w,
      (SELECT groupUniqArray(toUnixTimestamp(trace_start_hour)) FROM text_index_collisions WHERE project_id = {p:String}) AS hours`,
    query_params: { p: projectId },
  });
  return { watermarkMs: Number(row!.w), collisionHours: row!.hours.map(Number) };
}

/** The search with the index's state attached (see `textIndexState`). */
export async function withTextIndexState(
  ch: ClickHouseStore,
  projectId: string,
  text: TextSearch,
): Promise<TextSearch> {
  return { ...text, index: await textIndexState(ch, projectId) };
}
