import { Queue, Worker, createPostgresBackend, type Processor, type WorkerOptions } from 'bullmq';
import { Redis } from 'ioredis';
import path from 'node:path';
import type { Config } from '../config.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './postgres.js';

/**
 * The job-queue factory of a process. The application asks it for queues and workers by name and
 * never learns which backend is underneath:
 * - REDIS_URL set: BullMQ on Redis (ioredis);
 * - else DATABASE_URL set: BullMQ's PostgreSQL backend on that database, schema `bullmq`;
 * - else: BullMQ's PostgreSQL backend on a second, dedicated embedded PGlite (schema `public`),
 *   because BullMQ sets `search_path` per connection and embedded PGlite shares one session.
 */
export type QueueStore = {
  backend: 'redis' | 'postgres' | 'embedded-postgres';
  queue<T = unknown>(name: string): Queue<T>;
  worker<T = unknown>(name: string, processor: Processor<T>, options?: Partial<WorkerOptions>): Worker<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
};

export async function openQueue(config: Config, options: { dataDir?: string } = {}): Promise<QueueStore> {
  const queues = new Map<string, Queue>();
  const workers: Worker[] = [];
  let embedded: EmbeddedPostgres | undefined;

  let make: { queue: (name: string) => Queue; worker: (name: string, p: Processor, o: Partial<WorkerOptions>) => Worker };
  let ping: () => Promise<void>;
  let closeBackend: () => Promise<void>;
  let backend: QueueStore['backend'];

  if (config.redisUrl) {
    backend = 'redis';
    const redisUrl = config.redisUrl;
    const connection = () => new Redis(redisUrl, { maxRetriesPerRequest: null, enableOfflineQueue: true });
    const pinger = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true, enableOfflineQueue: false });
    pinger.on('error', () => {});
    make = {
      queue: (name) => new Queue(name, { connection: connection(), prefix: config.queuePrefix }),
      worker: (name, p, o) => new Worker(name, p, { ...o, connection: connection(), prefix: config.queuePrefix }),
    };
    ping = async () => {
      if (pinger.status === 'wait') await pinger.connect();
      await pinger.ping();
    };
    closeBackend = async () => {
      pinger.disconnect();
    };
  } else {
    backend = config.databaseUrl ? 'postgres' : 'embedded-postgres';
    let connection: Record<string, unknown>;
    if (config.databaseUrl) {
      connection = { connectionString: config.databaseUrl, schema: 'bullmq', migrate: true, max: 5 };
    } else {
      embedded = await startEmbeddedPostgres(path.resolve(options.dataDir ?? config.dataDir, 'queue'));
      connection = { ...embedded.connection, schema: 'public', migrate: true, max: 5 };
    }
    const pgConnection = connection as never;
    make = {
      queue: (name) => new Queue(name, { connection: pgConnection }, createPostgresBackend) as unknown as Queue,
      worker: (name, p, o) => new Worker(name, p, { ...o, connection: pgConnection }, createPostgresBackend) as unknown as Worker,
    };
    const pingQueue = () => queueFor('__ping');
    ping = async () => {
      await pingQueue().getJobCounts('waiting');
    };
    closeBackend = async () => {
      await embedded?.stop();
    };
  }

  function queueFor(name: string): Queue {
    let queue = queues.get(name);
    if (!queue) {
      queue = make.queue(name);
      queue.on('error', () => {});
      queues.set(name, queue);
    }
    return queue;
  }

  return {
    backend,
    queue: <T>(name: string) => queueFor(name) as unknown as Queue<T>,
    worker<T>(name: string, processor: Processor<T>, options: Partial<WorkerOptions> = {}) {
      const worker = make.worker(name, processor as Processor, options);
      worker.on('error', () => {});
      workers.push(worker);
      return worker as unknown as Worker<T>;
    },
    ping,
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all([...queues.values()].map((q) => q.close()));
      await closeBackend();
    },
  };
}
