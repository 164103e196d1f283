import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { webTypesOf } from '../../scripts/gen-web-types.js';
import { call, PUBLIC, projectWithKey, useHarness } from '../support/harness.js';
import { client, ingestAndRead } from './client/calls.js';

/**
 * The served OpenAPI document makes a usable generated client: openapi-typescript turns it into types,
 * tsc compiles a user's calls through openapi-fetch against them (test/http/client/calls.ts: right
 * calls compile, wrong ones are refused), and those calls work against a live server.
 */

const h = useHarness();
const run = promisify(execFile);
const CALLS = path.resolve('test/http/client/calls.ts');

describe('a client generated from the OpenAPI document', () => {
  it('type-checks real calls with tsc (and refuses wrong ones) against types generated from the served document', async () => {
    const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/openapi.json` });
    // Under the repository, so the copy resolves openapi-fetch from its node_modules.
    const dir = path.resolve('test-output', `client-${process.pid}-${crypto.randomBytes(4).toString('hex')}`);
    fs.mkdirSync(dir, { recursive: true });
    try {
      fs.writeFileSync(path.join(dir, 'api-schema.gen.ts'), await webTypesOf(res.json()));
      const calls = fs.readFileSync(CALLS, 'utf8');
      expect(calls).toContain("from '../../../web/src/api-schema.gen.js'");
      fs.writeFileSync(
        path.join(dir, 'calls.ts'),
        calls.replace("from '../../../web/src/api-schema.gen.js'", "from './api-schema.gen.js'"),
      );
      fs.writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            lib: ['ES2023', 'DOM'],
            types: [],
          },
          files: ['calls.ts'],
        }),
      );
      const tsc = path.resolve('node_modules/typescript/bin/tsc');
      const out = await run(process.execPath, [tsc, '-p', dir], { maxBuffer: 16 * 1024 * 1024 }).then(
        () => '',
        (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}` || 'tsc failed',
      );
      expect(out).toBe('');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('ingests spans and reads the trace back through openapi-fetch over HTTP', async () => {
    const { key } = await projectWithKey(h(), 'client');
    await h().api.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(h().api.server.address() as AddressInfo).port}`;
    const traceId = `client-${crypto.randomBytes(6).toString('hex')}`;
    const read = await ingestAndRead(client(origin, key.key), traceId);
    expect(read).toEqual({
      accepted: 1,
      spanStatus: 'error',
      totalCost: 0.25,
      metadata: { via: 'openapi-fetch' },
      listed: expect.arrayContaining([traceId]),
      missingStatus: 404,
    });
  });
});
