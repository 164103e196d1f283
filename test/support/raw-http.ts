import net from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * Raw HTTP against a listening app, for what `inject` never exercises: answers Node's HTTP parser
 * gives before Fastify sees a request (headers too large, malformed request lines).
 */
export type RawAnswer = { status: number; headers: Record<string, string>; body: string };

/** Starts the app on a loopback port (once) and returns it. */
export async function listening(app: FastifyInstance): Promise<number> {
  const address = app.server.address();
  if (address && typeof address === 'object') return address.port;
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as net.AddressInfo).port;
}

/** Writes `request` as is and reads the answer until the server closes the connection. */
export function rawRequest(port: number, request: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    socket.write(request);
  });
}
