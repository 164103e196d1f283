/**
 * How `spans` stores a span's input and output (clickhouse/0016 and 0017): one column `io` holding the
 * input's bytes then the output's, so that an LLM call's answer and the next call's input, which
 * repeats it, share one compression stream; `io_split` (the input's length in bytes) and `io_nulls`
 * (bit 0: no input, bit 1: no output) take them apart again. `input` and `output` are ALIAS columns
 * of the table: every read names them as before; only writers use this module.
 */

/** The stored columns, in this order, where a writer used to put `input, output`. */
export const PAYLOAD_COLUMNS = ['io', 'io_split', 'io_nulls'] as const;

export type PayloadValues = [io: string, io_split: number, io_nulls: number];

/**
 * The stored values of an input and an output. `io_split` counts UTF-8 bytes as the engine's
 * `substring` does; Buffer.byteLength counts an unpaired surrogate as the 3 bytes the engine stores
 * for it, so the split falls between the same bytes either way.
 */
export function payloadValues(input: string | null, output: string | null): PayloadValues {
  const i = input ?? '';
  return [i + (output ?? ''), Buffer.byteLength(i), (input === null ? 1 : 0) | (output === null ? 2 : 0)];
}

/**
 * A row object for JSONEachRow with `input` and `output` replaced by the stored columns (bench loaders
 * and tests that insert into `spans` directly; the engine would drop `input` and `output` unread).
 */
export function withPayload<T extends { input?: string | null; output?: string | null }>(
  row: T,
): Omit<T, 'input' | 'output'> & { io: string; io_split: number; io_nulls: number } {
  const { input = null, output = null, ...rest } = row;
  const [io, io_split, io_nulls] = payloadValues(input, output);
  return { ...rest, io, io_split, io_nulls };
}

/** The same three columns computed by the engine from input and output expressions (INSERT … SELECT). */
export function payloadExpressions(input: string, output: string): string {
  return `concat(ifNull(${input}, ''), ifNull(${output}, '')) AS io, length(ifNull(${input}, '')) AS io_split, bitOr(if(${input} IS NULL, 1, 0), if(${output} IS NULL, 2, 0)) AS io_nulls`;
}
