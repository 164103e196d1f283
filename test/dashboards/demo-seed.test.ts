import { describe, expect, it } from 'vitest';
import { useHarness } from '../support/harness.js';
import { seedDemoAccount } from '../../src/demo/seed.js';
import { OVERVIEW_WIDGETS } from '../../src/widgets/spec.js';

// Its own embedded Postgres: the demo seed runs only on an empty store.
const h = useHarness({ DATABASE_URL: undefined, REDIS_URL: undefined });

describe('the demo account', () => {
  it('starts with its project\'s default "Overview" dashboard', async () => {
    const demo = await seedDemoAccount(h().ctx);
    expect(demo).not.toBeNull();
    if (!demo) return;
    const { rows } = await h().ctx.pg.pool.query<{ name: string; is_default: boolean; title: string }>(
      `SELECT d.name, d.is_default, w.title FROM dashboards d JOIN widgets w ON w.dashboard_id = d.id
        WHERE d.project_id = $1 ORDER BY w.create_time, w.id`,
      [demo.projectId],
    );
    expect(rows.map((r) => r.title)).toEqual(OVERVIEW_WIDGETS.map((w) => w.title));
    expect(rows.every((r) => r.name === 'Overview' && r.is_default)).toBe(true);
  });
});
