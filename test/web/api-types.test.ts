import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { webTypesOf, WEB_TYPES_FILE } from '../../scripts/gen-web-types.js';
import { call, PUBLIC, useHarness } from '../support/harness.js';

/**
 * The web application's API types are generated from the OpenAPI document the API serves
 * (web/src/api-schema.gen.ts, `npm run gen:web-types`); web/src/types.ts only names them. A change
 * to an answer schema that is not regenerated fails here, so the web app never reads a stale shape.
 */

const h = useHarness();

describe('web API types', () => {
  it('web/src/api-schema.gen.ts is what openapi-typescript generates from the served document', async () => {
    const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/openapi.json` });
    expect(res.statusCode).toBe(200);
    const generated = await webTypesOf(res.json());
    const committed = fs.readFileSync(WEB_TYPES_FILE, 'utf8');
    // Not toBe on 6,000 lines: the first differing line says what changed.
    const a = committed.split('\n');
    const b = generated.split('\n');
    const at = a.findIndex((line, i) => line !== b[i]);
    const where = at < 0 ? a.length : at;
    expect(
      { line: where + 1, committed: a.slice(where, where + 3), generated: b.slice(where, where + 3) },
      'web/src/api-schema.gen.ts is stale: run `npm run gen:web-types`',
    ).toEqual({ line: a.length + 1, committed: [], generated: [] });
    expect(generated).toBe(committed);
  });
});
