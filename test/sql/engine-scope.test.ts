import { describe, expect, it } from 'vitest';
import { tableFilters } from '../../src/sql/engine-scope.js';
import { executableSql } from '../../src/sql/service.js';
import { useHarness } from '../support/harness.js';
import { MA, MB, useWorld } from './hostile-fixture.js';

/**
 * Defense in depth (src/sql/engine-scope.ts): SQL that never went through the guard, as a guard bug
 * would let through, still reads only the caller's rows, because the engine filters every table the
 * query touches. These run raw text on a public SQL session, as the guard's output would.
 */

const h = useHarness();
const w = useWorld(h);

async function raw(sql: string): Promise<unknown[][]> {
  const ctx = h().ctx;
  const filters = await tableFilters(ctx.ch, w().a.project.id);
  const text = executableSql(sql, w().a.project.id, { filters, rowPolicySetting: false });
  const result = await ctx.ch.sqlClients[0]!.query({ query: text, format: 'JSONCompactEachRow' });
  return (await result.json()) as unknown[][];
}

describe('unguarded SQL on a public SQL session', () => {
  it("reads the physical tables with A's rows only, however it names them", async () => {
    const db = h().ctx.ch.database;
    for (const q of [
      `SELECT name, project_id FROM ${db}.spans`,
      'SELECT name, project_id FROM spans',
      `SELECT trace_id, project_id FROM ${db}.traces FINAL`,
      'SELECT summary, project_id FROM findings',
    ]) {
      const rows = await raw(q);
      expect(rows.length, q).toBeGreaterThan(0);
      for (const [value, project] of rows) {
        expect(project, q).toBe(w().a.project.id);
        expect(String(value).startsWith(MA), `${q}: ${String(value)}`).toBe(true);
      }
    }
  });

  it("the TABLESAMPLE attack's text, as the old guard passed it, returns none of B's rows", async () => {
    const attack = `WITH c AS (SELECT name FROM spans) SELECT name FROM c AS tablesample UNION ALL (SELECT concat(project_id, ' | ', name) FROM spans WHERE project_id = '${w().b.project.id}' LIMIT 5)`;
    const rows = await raw(attack);
    expect(JSON.stringify(rows)).not.toContain(MB);
    expect(JSON.stringify(rows)).not.toContain(w().b.project.id);
  });

  it('sees nothing of the server: system and information_schema tables and the rollups are empty', async () => {
    for (const q of [
      'SELECT name FROM system.tables',
      'SELECT path FROM system.disks',
      'SELECT query FROM system.processes',
      'SELECT name FROM system.databases',
      'SELECT * FROM information_schema.tables',
      'SELECT * FROM INFORMATION_SCHEMA.COLUMNS',
      'SELECT project_id FROM span_rollup_1m',
      'SELECT name FROM system.functions',
    ]) {
      expect(await raw(q), q).toEqual([]);
    }
  });

  it('a SELECT without FROM still answers (it reads system.one)', async () => {
    expect(await raw('SELECT 1 + 1')).toEqual([[2]]);
  });

  it('the project id is never spliced into SQL unless it is a plain id', () => {
    expect(() => executableSql('SELECT 1', "x' OR 1=1 --", { filters: '{}', rowPolicySetting: false })).toThrow();
  });
});
