import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/openapi-operations.js';
import { call, PUBLIC, tempDataDir, useHarness } from '../support/harness.js';

/**
 * The served OpenAPI document is one generators and linters take as it is: Redocly's recommended
 * rules (redocly.yaml) find nothing, and every operation carries the name, summary and tag of the one
 * table (src/openapi-operations.ts).
 */

const h = useHarness();
const run = promisify(execFile);

type Operation = { operationId?: string; summary?: string; tags?: string[]; responses: Record<string, unknown> };

async function servedDocument(): Promise<{ paths: Record<string, Record<string, Operation>> }> {
  const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/openapi.json` });
  expect(res.statusCode).toBe(200);
  return res.json();
}

describe('OpenAPI document lint', () => {
  it('names every operation from the table: a unique operationId, a summary, a tag, and the 400 listed', async () => {
    const doc = await servedDocument();
    const ids: string[] = [];
    const keys: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const key = `${method.toUpperCase()} ${path.slice(PUBLIC.length)}`;
        keys.push(key);
        expect(OPERATIONS[key], `${key} has no entry in src/openapi-operations.ts`).toBeDefined();
        expect(operation).toMatchObject({
          operationId: OPERATIONS[key]!.operationId,
          summary: OPERATIONS[key]!.summary,
          tags: [OPERATIONS[key]!.tag],
        });
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['400', '401', '422', '4XX', '5XX']));
        ids.push(operation.operationId!);
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
    // No entry of the table is left over from a route that is gone or moved.
    expect(Object.keys(OPERATIONS).sort()).toEqual(keys.sort());
  });

  it('passes `redocly lint` with the recommended rules: no error, no warning', async () => {
    const doc = await servedDocument();
    const dir = tempDataDir('openapi-lint');
    try {
      const file = path.join(dir, 'openapi.json');
      fs.writeFileSync(file, JSON.stringify(doc));
      const cli = path.resolve('node_modules/@redocly/cli/bin/cli.js');
      const config = path.resolve('redocly.yaml');
      // Exit status 1 when problems are found: the JSON report is on stdout either way.
      const out = await run(process.execPath, [cli, 'lint', file, '--config', config, '--format', 'json'], {
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
      const report = JSON.parse(out.stdout) as {
        totals: { errors: number; warnings: number };
        problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
      };
      const problems = report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
      expect(problems.slice(0, 20)).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
