import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { listening } from '../support/raw-http.js';

/**
 * A body over the ingest limit (10 MiB) gets a readable 413 `{detail}` even while the client is still
 * sending it, the way an HTTP client streams a large request, rather than a closed connection (EPIPE).
 */

const h = useHarness();

function streamPost(
  port: number,
  path: string,
  token: string,
  total: number,
  chunked = false,
): Promise<{ status?: number; body?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path,
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        ...(chunked ? {} : { 'content-length': total }),
        authorization: `Bearer ${token}`,
      },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? e.message }));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

describe('oversized bodies', () => {
  it(
    'a 24 MiB ingest body, streamed with its Content-Length, is answered 413 {detail}',
    { timeout: 60_000 },
    async () => {
      const { key } = await projectWithKey(h());
      const port = await listening(h().api);
      const answer = await streamPost(port, `${PUBLIC}/traces`, key.key, 24 * 1024 * 1024);
      expect(answer.error).toBeUndefined();
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body!)).toEqual({ detail: 'request body is too large' });
    },
  );

  it(
    'a 24 MiB ingest body sent in chunks, with no Content-Length, is answered 413 {detail} once it passes the limit',
    { timeout: 60_000 },
    async () => {
      const { key } = await projectWithKey(h());
      const port = await listening(h().api);
      const answer = await streamPost(port, `${PUBLIC}/traces`, key.key, 24 * 1024 * 1024, true);
      expect(answer.error).toBeUndefined();
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body!)).toEqual({ detail: 'request body is too large' });
    },
  );
});
