import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseMultipartRuns } from '../../src/protocols/langsmith/multipart.js';

/**
 * The `/runs/multipart` body parser (src/protocols/langsmith/multipart.ts) alone: what the SDK sends,
 * and the answers to bodies it doesn't (the route's 400 and 413 sentences).
 */

const limits = { maxBodyBytes: 10_000, maxParts: 8 };
const body = (boundary: string, parts: [string, string, string?][], close = true) =>
  parts
    .map(
      ([name, value, filename]) =>
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n` +
        `Content-Type: application/json\r\n\r\n${value}\r\n`,
    )
    .join('') + (close ? `--${boundary}--\r\n` : '');
const parse = (text: string, contentType = 'multipart/form-data; boundary=b1', max = limits) =>
  parseMultipartRuns(Readable.from([Buffer.from(text)]), contentType, max);

describe('the multipart body of /runs/multipart', () => {
  it("joins a run's parts, keeps feedback, drops attachments and rejects a bad part alone", async () => {
    const text = body('b1', [
      ['post.r1', JSON.stringify({ name: 'root', start_time: '2026-01-01T00:00:00Z' })],
      ['post.r1.inputs', JSON.stringify({ q: 'é\r\n--b1x' })],
      ['patch.r1', JSON.stringify({ end_time: 5 })],
      ['patch.r1.outputs', JSON.stringify({ a: 1 })],
      ['post.r2', '{not json'],
      ['feedback.f1', JSON.stringify({ key: 'k', score: 1 })],
      ['attachment.r1.img', '\u0001\u0002', 'img.png'],
    ]);
    const parsed = await parse(`preamble\r\n${text}epilogue`);
    expect(parsed.post).toEqual([
      { id: 'r1', name: 'root', start_time: '2026-01-01T00:00:00Z', inputs: { q: 'é\r\n--b1x' } },
    ]);
    expect(parsed.patch).toEqual([{ id: 'r1', end_time: 5, outputs: { a: 1 } }]);
    expect(parsed.feedback).toEqual([{ id: 'f1', key: 'k', score: 1 }]);
    expect(parsed.rejected).toEqual([{ name: 'post.r2', error: "part 'post.r2' is not valid JSON" }]);
    expect(parsed.attachments).toBe(1);
  });

  it('reads headers written otherwise as the general reading does, the usual ones by the short way', async () => {
    const part = (headers: string, value = '{}') => `--b1\r\n${headers}\r\n\r\n${value}\r\n`;
    const parsed = await parse(
      part('content-disposition: form-data; name="post.a"') +
        part('Content-Disposition: form-data; name="post.b"; filename="b.json"') +
        part('Content-Disposition: form-data; name="post.c;x"') +
        part('Content-Disposition: form-data; name="post.d"\r\nContent-Disposition: form-data; name="post.e"') +
        part('Content-Disposition: form-data; name="post.f"\r\nContent-Type: application/json') +
        '--b1--\r\n',
    );
    // b: a filename makes it an attachment; c: a quoted `;` is part of the name; d: the last
    // Content-Disposition line counts.
    expect(parsed.post.map((r) => r.id)).toEqual(['a', 'c;x', 'e', 'f']);
  });

  it('reads a quoted boundary', async () => {
    const parsed = await parse(body('a b', [['post.r1', '{}']]), 'multipart/form-data; boundary="a b"');
    expect(parsed.post).toEqual([{ id: 'r1' }]);
  });

  it('answers 400 to a body without a boundary or cut inside a part, 413 past the bounds', async () => {
    await expect(parse(body('b1', [['post.r1', '{}']]), 'multipart/form-data')).rejects.toMatchObject({
      status: 400,
      detail: 'multipart body without a boundary; send multipart/form-data; boundary=…',
    });
    for (const text of ['', 'no boundary here', body('b1', [['post.r1', '{}']], false).slice(0, -4), '--b1']) {
      await expect(parse(text)).rejects.toMatchObject({
        status: 400,
        detail: 'request body is not valid multipart/form-data',
      });
    }
    const many = body(
      'b1',
      Array.from({ length: 9 }, (_, i) => [`post.r${i}`, '{}'] as [string, string]),
    );
    await expect(parse(many)).rejects.toMatchObject({ status: 413, message: 'at most 8 parts per request' });
    await expect(parse(body('b1', [['post.r1', JSON.stringify({ big: 'x'.repeat(20_000) })]]))).rejects.toMatchObject({
      status: 413,
      detail: 'request body is too large: at most 10000 bytes; send fewer runs',
    });
  });
});
