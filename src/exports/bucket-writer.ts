import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { failureWording, publicOnlyLookup } from '../outbound/addresses.js';
import type { OpenBucket } from './buckets.js';

/**
 * Writes an export's parts to an S3-compatible bucket with the official SDK: each part streamed by
 * lib-storage's multipart upload (8 MiB pieces, two in flight: the memory it takes whatever the part's
 * size), under a key fixed by the export and the part (`{prefix}{export_id}/part-00001.parquet`), so a
 * part written again after a crash replaces the object instead of adding one. A multipart upload
 * that died half-way leaves no object. Unless EXPORT_ALLOW_PRIVATE, every connection resolves the
 * endpoint's name through publicOnlyLookup, so a name that resolves to a private address is refused
 * at connect time as the webhook rules say.
 */

const TARGET = 'the bucket host';
const PIECE_BYTES = 8 * 1024 * 1024;
const REQUEST_TIMEOUT_MS = 120_000;

export class BucketWriteError extends Error {}

export type BucketWriter = {
  keyOf(exportId: string, name: string): string;
  put(key: string, body: Readable, contentType: string): Promise<void>;
  close(): void;
};

export function bucketWriter(bucket: OpenBucket, allowPrivate: boolean): BucketWriter {
  const lookup = allowPrivate ? undefined : (publicOnlyLookup(TARGET) as never);
  const client = new S3Client({
    endpoint: bucket.endpoint,
    region: bucket.region,
    forcePathStyle: bucket.forcePathStyle,
    credentials: { accessKeyId: bucket.accessKeyId, secretAccessKey: bucket.secretAccessKey },
    maxAttempts: 3,
    requestHandler: {
      httpAgent: new http.Agent({ keepAlive: true, lookup }),
      httpsAgent: new https.Agent({ keepAlive: true, lookup }),
      requestTimeout: REQUEST_TIMEOUT_MS,
    },
  });
  return {
    keyOf: (exportId, name) => `${bucket.prefix}${exportId}/${name}`,
    async put(key, body, contentType) {
      try {
        await new Upload({
          client,
          params: { Bucket: bucket.bucket, Key: key, Body: body, ContentType: contentType },
          partSize: PIECE_BYTES,
          queueSize: 2,
          leavePartsOnError: false,
        }).done();
      } catch (error) {
        body.destroy();
        throw new BucketWriteError(bucketFailure(error));
      }
    },
    close: () => client.destroy(),
  };
}

/**
 * A fixed sentence for a failed write: the S3 error's code (NoSuchBucket, AccessDenied, ...), or the
 * network failure's kind; never the server's message, a credential or an address.
 */
export function bucketFailure(error: unknown): string {
  if (error instanceof S3ServiceException && /^[A-Za-z]{1,64}$/.test(error.name))
    return `the bucket refused the write (${error.name})`;
  const cause = error instanceof Error ? ((error as { cause?: unknown }).cause ?? error) : error;
  return `could not write to the bucket: ${failureWording(cause instanceof Error ? cause : new Error('failed'), TARGET)}`;
}
