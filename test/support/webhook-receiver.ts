import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local webhook receiver on 127.0.0.1 for alert tests: records every request (raw body included,
 * for signature checks) and answers each path with a scripted sequence of statuses (the last one
 * repeats; 200 when none is scripted). `onRequest` runs before the answer, e.g. to look at the store
 * between two attempts.
 */
export type Received = { path: string; headers: http.IncomingHttpHeaders; body: string };

export type Receiver = {
  url(path: string): string;
  requests: Received[];
  on(path: string): Received[];
  script(path: string, statuses: number[]): void;
  onRequest?: (r: Received, nth: number) => Promise<void> | void;
  close(): Promise<void>;
};

export async function startReceiver(): Promise<Receiver> {
  const scripts = new Map<string, number[]>();
  const requests: Received[] = [];
  const receiver: Receiver = {
    url: (path) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    requests,
    on: (path) => requests.filter((r) => r.path === path),
    script: (path, statuses) => void scripts.set(path, statuses),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // A sender's kept-alive connection would hold the close open.
        server.closeAllConnections();
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const received = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(received);
      const nth = receiver.on(received.path).length;
      await receiver.onRequest?.(received, nth);
      const statuses = scripts.get(received.path) ?? [200];
      res.statusCode = statuses[Math.min(nth, statuses.length) - 1]!;
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return receiver;
}
