/**
 * Keeps each client's extended-protocol sequence whole on an embedded PGlite served by
 * `@electric-sql/pglite-socket` (0.2.x).
 *
 * The socket server queues every protocol message of every connection into the ONE PGlite session,
 * one message at a time, and keeps serving the same connection only while a transaction is open.
 * node-postgres sends a parameterised query as Parse, Bind, Describe, Execute, Sync: two connections
 * querying at once interleave those messages in the shared session, so one connection's Bind meets
 * the other's Parse ("unnamed prepared statement does not exist", 'portal "" does not exist'), and a
 * connection whose messages were discarded by the other's error can wait for an answer for ever.
 * Measured on the embedded queue (BullMQ opens several pools there): workers created while others
 * were setting up never became ready, and no detection tick ever ran under `npm start`.
 *
 * The fix is the transaction rule extended to protocol sequences: once a connection sends Parse,
 * Bind, Describe, Execute, Close or Flush, the queue serves only that connection until its Sync.
 * A connection that goes away mid-sequence releases the session.
 */

type QueuedMessage = {
  handlerId: number;
  message: Uint8Array;
  resolve: (n: number) => void;
  reject: (e: unknown) => void;
  onData: (data: Uint8Array) => void;
};
type QueryQueue = {
  queue: QueuedMessage[];
  processing: boolean;
  lastHandlerId: number | null;
  db: {
    isInTransaction(): boolean;
    runExclusive<T>(fn: () => Promise<T>): Promise<T>;
    execProtocolRawStream(message: Uint8Array, options: { onRawData: (data: Uint8Array) => void }): Promise<unknown>;
  };
  processQueue(): Promise<void>;
  clearQueueForHandler(handlerId: number): void;
};

/** Message types that open or continue an extended-protocol sequence (it ends at Sync, 'S'). */
const EXTENDED = new Set(['P', 'B', 'D', 'E', 'C', 'H'].map((c) => c.charCodeAt(0)));
const SYNC = 'S'.charCodeAt(0);

export function serializeProtocolSequences(server: unknown): void {
  const queue = (server as { queryQueue?: QueryQueue }).queryQueue;
  // Another version of the server keeps its queue elsewhere: leave it as it is.
  if (!queue || typeof queue.processQueue !== 'function' || !Array.isArray(queue.queue)) return;
  let owner: number | null = null;

  queue.processQueue = async function processQueue(this: QueryQueue): Promise<void> {
    if (this.processing || this.queue.length === 0) return;
    this.processing = true;
    try {
      while (this.queue.length > 0) {
        const sticky = this.db.isInTransaction() && this.lastHandlerId !== null ? this.lastHandlerId : owner;
        const index = sticky === null ? 0 : this.queue.findIndex((m) => m.handlerId === sticky);
        // The session belongs to a connection that has not sent its next message yet: wait for it.
        if (index === -1) break;
        const item = this.queue.splice(index, 1)[0]!;
        const type = item.message[0]!;
        if (EXTENDED.has(type)) owner = item.handlerId;
        else if (type === SYNC && owner === item.handlerId) owner = null;
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (data) => {
                bytes += data.length;
                item.onData(data);
              },
            }),
          );
        } catch (error) {
          item.reject(error);
          continue;
        }
        this.lastHandlerId = item.handlerId;
        item.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  };

  const clear = queue.clearQueueForHandler.bind(queue);
  queue.clearQueueForHandler = (handlerId: number) => {
    if (owner === handlerId) owner = null;
    clear(handlerId);
    // Messages of others may have waited for the one that left.
    void queue.processQueue();
  };
}
