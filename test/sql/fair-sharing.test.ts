import { describe, expect, it } from 'vitest';
import { useHarness } from '../support/harness.js';
import { sql, useWorld } from './hostile-fixture.js';
import { sqlScheduler } from '../../src/sql/service.js';
import { waitUntil } from '../support/wait.js';

/**
 * One project's slow SQL no longer stalls another's (src/sql/scheduler.ts): with two sessions and a
 * share of one query per project, B's quick query answers while A's slow one still runs; A's next
 * query waits its turn, and one more is refused at once with 429.
 */

const h = useHarness({ SQL_SESSIONS: '2', SQL_MAX_CONCURRENT_PER_PROJECT: '1', SQL_QUEUE_PER_PROJECT: '1' });
const w = useWorld(h);

// About 17 million joined rows of A's bulk trace: a second or more of work (on a loaded machine it
// may reach the 10 s limit and answer 400; either way it holds A's share while it runs).
const SLOW =
  'SELECT count() FROM spans AS a, spans AS b, (SELECT span_id FROM spans LIMIT 100) AS c WHERE sipHash64(a.span_id, b.span_id, c.span_id) % 7 = 3';

describe('public SQL shared between projects', () => {
  it(
    "B's quick query answers while A's slow one runs; A's third is refused with 429",
    { timeout: 120_000 },
    async () => {
      const events: string[] = [];
      const load = () => sqlScheduler(h().ctx).load(w().a.project.id);
      const slow = sql(h(), w().a.key.key, SLOW).then((res) => (events.push('A slow answered'), res));
      await waitUntil(() => load().running === 1, "A's slow query to run");
      const queued = sql(h(), w().a.key.key, 'SELECT count() FROM traces').then(
        (res) => (events.push('A queued answered'), res),
      );
      await waitUntil(() => load().waiting === 1, "A's second query to wait its turn");
      const refused = await sql(h(), w().a.key.key, 'SELECT 1');
      expect(refused.statusCode, refused.body).toBe(429);
      expect(Object.keys(refused.json())).toEqual(['detail']);
      expect(refused.headers['retry-after']).toBe('1');

      const quick = await sql(h(), w().b.key.key, 'SELECT count() FROM traces');
      events.push('B answered');
      expect(quick.statusCode, quick.body).toBe(200);
      expect(quick.json().rows).toEqual([[4]]);

      const [a, q] = await Promise.all([slow, queued]);
      expect([200, 400], a.body).toContain(a.statusCode);
      expect(q.statusCode, q.body).toBe(200);
      // A's queued query ran only after its slow one freed A's share; B never waited for either.
      expect(events).toEqual(['B answered', 'A slow answered', 'A queued answered']);
    },
  );
});
