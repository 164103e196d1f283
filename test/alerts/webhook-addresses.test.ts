import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createProject, PUBLIC, signUp, useHarness } from '../support/harness.js';
import { expectValidationAt } from '../support/expect.js';
import { deliver, isPrivateAddress } from '../../src/alerts/webhook.js';

/**
 * Issue 20, smaller findings: webhook URLs that carry an internal IPv4 address inside an IPv6 one
 * (`[::127.0.0.1]`, `[::ffff:0:127.0.0.1]`, `[64:ff9b::7f00:1]`) were accepted at create, and
 * `last_notify_error` echoed the network's own error messages.
 */

const h = useHarness({ ALERT_WEBHOOK_ALLOW_PRIVATE: 'false' });

const INTERNAL = [
  '::127.0.0.1',
  '::ffff:0:127.0.0.1',
  '64:ff9b::7f00:1',
  '64:ff9b::10.0.0.1',
  '64:ff9b:1::1',
  '::ffff:127.0.0.1',
  '::ffff:169.254.169.254',
  '2002:7f00:1::',
  '2002:a9fe:a9fe::1',
  '2001:0:4136:e378:8000:63bf:80ff:fefe',
  '2001:0:7f00:1::1',
  'fec0::1',
  '2001:db8::1',
];
const PUBLIC_V6 = ['2606:4700:4700::1111', '64:ff9b::8.8.8.8', '2002:808:808::1', '::ffff:8.8.8.8'];

const alert = (projectId: string, url: string) => ({
  name: 'hook',
  project_id: projectId,
  view: 'SPANS',
  measure: 'count',
  threshold: 0,
  window: '1m',
  notify: { webhook_url: url },
});

describe('webhook addresses that embed an internal IPv4 address', () => {
  it('are private addresses; public ones are not', () => {
    for (const a of INTERNAL) expect(isPrivateAddress(a), a).toBe(true);
    for (const a of PUBLIC_V6) expect(isPrivateAddress(a), a).toBe(false);
  });

  it('are refused at create and update like other internal addresses', async () => {
    const owner = await signUp(h(), 'hooks');
    const project = await createProject(h(), owner.token, owner.workspace.id);
    for (const host of ['::127.0.0.1', '::ffff:0:127.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::', '64:ff9b:1::a00:1']) {
      const res = await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/alerts`,
        token: owner.token,
        payload: alert(project.id, `http://[${host}]:8080/hook`),
      });
      expectValidationAt(res, ['body', 'notify', 'webhook_url']);
    }
    const made = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/alerts`,
      token: owner.token,
      payload: alert(project.id, 'https://[2606:4700:4700::1111]/hook'),
    });
    expect(made.statusCode, made.body).toBe(201);
    const res = await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/alerts/${made.json().alert.id}`,
      token: owner.token,
      payload: { project_id: project.id, notify: { webhook_url: 'http://[64:ff9b::7f00:1]/hook' } },
    });
    expectValidationAt(res, ['body', 'notify', 'webhook_url']);
  });
});

describe('delivery errors', () => {
  let closed: net.Server;
  let closedPort = 0;
  beforeAll(async () => {
    // A server that accepts and closes at once: the connection ends before any answer.
    closed = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    closedPort = (closed.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => closed.close(() => resolve())));

  const send = (url: string, allowPrivate = true) =>
    deliver({ url, body: '{}', headers: {}, timeoutMs: 2000, allowPrivate });

  it('are a fixed wording per kind of failure, never the network message (no address, port or name)', async () => {
    const free = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    const refused = await send(`http://127.0.0.1:${free}/hook`);
    expect(refused).toEqual({
      ok: false,
      statusCode: null,
      error: 'the webhook host refused the connection',
      retry: true,
    });
    const reset = await send(`http://127.0.0.1:${closedPort}/hook`);
    expect(reset).toEqual({
      ok: false,
      statusCode: null,
      error: 'the connection was closed before an answer',
      retry: true,
    });
    const literal = await send('http://[::ffff:0:127.0.0.1]:9/hook', false);
    expect(literal).toEqual({
      ok: false,
      statusCode: null,
      error: 'the webhook host is a loopback or private address',
      retry: false,
    });
    for (const r of [refused, reset, literal]) {
      const text = JSON.stringify(r);
      for (const leak of ['127.0.0.1', String(free), String(closedPort), 'ECONN', 'socket hang up'])
        expect(text, leak).not.toContain(leak);
    }
  });
});
