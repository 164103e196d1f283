/** Timing and reporting helpers of the benchmark. */

export type Row = { work: string; api: string; reference: string; ratio: string; target: string };

export async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/**
 * POSTs ingest bodies to `url`, `concurrency` requests in flight, each expected to answer 200 in the
 * end: a 429 or 503 (the ingest queue full, docs/operations.md) is sent again after its Retry-After,
 * as a producer would. Answers how many such retries it took.
 */
export async function postIngestBodies(
  url: string,
  key: string,
  bodies: readonly string[],
  concurrency: number,
): Promise<number> {
  let next = 0;
  let retries = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        for (;;) {
          const res = await fetch(url, {
            method: 'POST',
            body,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          });
          if ((res.status === 429 || res.status === 503) && res.headers.has('retry-after')) {
            await res.arrayBuffer();
            retries++;
            await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after')) * 1000));
            continue;
          }
          if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
          await res.arrayBuffer();
          break;
        }
      }
    }),
  );
  return retries;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function printTable(rows: Row[]): void {
  const headers: (keyof Row)[] = ['work', 'api', 'reference', 'ratio', 'target'];
  const widths = headers.map((h) => Math.max(h.length, ...rows.map((r) => r[h].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(`\n${line(headers)}`);
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(headers.map((h) => r[h])));
}
