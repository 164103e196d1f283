/**
 * The public API's OpenAPI document, as the API serves it at `/api/v1/public/openapi.json`. Run
 * directly, writes it to the file named (stdout without one). The routes register against real stores
 * (embedded ones in a throwaway directory, unless DATABASE_URL/REDIS_URL/CLICKHOUSE_URL name servers);
 * nothing is served. Used by `npm run lint:openapi` and `npm run gen:web-types`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildApiApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openRuntime } from '../src/runtime.js';

export async function servedOpenApiDocument(): Promise<object> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-openapi-'));
  try {
    const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', DATA_DIR: dir });
    const ctx = await openRuntime(config);
    try {
      const app = buildApiApp(ctx);
      await app.ready();
      const doc = app.swagger();
      await app.close();
      return doc;
    } finally {
      await ctx.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const text = `${JSON.stringify(await servedOpenApiDocument(), null, 2)}\n`;
  if (process.argv[2]) fs.writeFileSync(process.argv[2], text);
  else process.stdout.write(text);
}
