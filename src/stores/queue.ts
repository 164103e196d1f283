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
  /**
   * Runs `listener` each time the connection of `name`'s queue is back after it was lost; answers
   * the stop of that. A Redis that restarts without persistence comes back empty, job schedulers
   * included, so their owners upsert them again here. Postgres backends keep their jobs through a
   * restart: never called there.
   */
  onReconnect(name: string, listener: () => void): () => void;
  close(): Promise<void>;
};

/** How long one attempt to upsert a job scheduler may take before it is tried again. */
const SCHEDULER_ATTEMPT_TIMEOUT_MS = 10_000;

/**
 * Upserts the job scheduler `schedulerId` of `name`'s queue (idempotent, so every worker process may
 * call it), each attempt with a deadline and failures retried with backoff. The owners (alert ticks,
 * detection, the text indexer) do nothing without their scheduler, and on the embedded queue (one
 * PGlite session behind several BullMQ connections) an upsert may fail while BullMQ's connections are
 * being set up ('portal "" does not exist', measured) or never answer (one issued after the queue's
 * workers existed; hence each owner schedules before it starts its workers).
 */
export async function upsertScheduler<T>(
  store: QueueStore,
  name: string,
  schedulerId: string,
  repeat: { every: number } | { pattern: string },
  job: { name: string; data: T },
  attempts = 8,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let timer: NodeJS.Timeout | undefined;
    try {
      const upsert = store
        .queue(name)
        .upsertJobScheduler(schedulerId, repeat, { ...job, opts: { removeOnComplete: 100, removeOnFail: 100 } });
      upsert.catch(() => {});
      await Promise.race([
        upsert,
        new Promise(
          (_, reject) =>
            (timer = setTimeout(
              () => reject(new Error('the queue did not answer in time')),
              SCHEDULER_ATTEMPT_TIMEOUT_MS,
            )),
        ),
      ]);
      return;
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** attempt, 10_000)));
    } finally {
      clearTimeout(timer);
    }
  }
}

export async function openQueue(config: Config, options: { dataDir?: string } = {}): Promise<QueueStore> {
  const queues = new Map<string, Queue>();
  const workers: Worker[] = [];
  const reconnectListeners = new Map<string, Set<() => void>>();
  let embedded: EmbeddedPostgres | undefined;

  let make: {
    queue: (name: string) => Queue;
    worker: (name: string, p: Processor, o: Partial<WorkerOptions>) => Worker;
  };
  let ping: () => Promise<void>;
  let closeBackend: () => Promise<void>;
  let backend: QueueStore['backend'];

  if (config.redisUrl) {
    backend = 'redis';
    const redisUrl = config.redisUrl;
    // BullMQ never closes a connection it was handed (it counts it as shared): this store ends each
    // one, or it would keep reconnecting (and logging) after its queue or worker closed.
    const clients: Redis[] = [];
    const connection = () => {
      const client = new Redis(redisUrl, { maxRetriesPerRequest: null, enableOfflineQueue: true });
      clients.push(client);
      return client;
    };
    const pinger = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true, enableOfflineQueue: false });
    pinger.on('error', () => {});
    make = {
      queue: (name) => {
        const client = connection();
        // 'close' on every lost connection (and a failed first connect); 'ready' on every return.
        let lost = false;
        client.on('close', () => void (lost = true));
        client.on('ready', () => {
          if (!lost) return;
          lost = false;
          for (const listener of reconnectListeners.get(name) ?? []) listener();
        });
        return new Queue(name, { connection: client, prefix: config.queuePrefix });
      },
      worker: (name, p, o) => {
        const client = connection();
        const worker = new Worker(name, p, { ...o, connection: client, prefix: config.queuePrefix });
        worker.on('closed', () => client.disconnect());
        return worker;
      },
    };
    ping = async () => {
      if (pinger.status === 'wait') await pinger.connect();
      await pinger.ping();
    };
    closeBackend = async () => {
      pinger.disconnect();
      for (const client of clients) client.disconnect();
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
      worker: (name, p, o) =>
        new Worker(name, p, { ...o, connection: pgConnection }, createPostgresBackend) as unknown as Worker,
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
    onReconnect(name, listener) {
      if (backend !== 'redis') return () => {};
      const listeners = reconnectListeners.get(name) ?? new Set();
      reconnectListeners.set(name, listeners.add(listener));
      queueFor(name);
      return () => void listeners.delete(listener);
    },
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      await Promise.all([...queues.values()].map((q) => q.close()));
      await closeBackend();
    },
  };
}
