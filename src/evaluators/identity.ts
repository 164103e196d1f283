import crypto from 'node:crypto';

/**
 * The deterministic decisions of an evaluator (quality spec §2): whether a trace is sampled, and the
 * id of the one score an evaluator writes for a target. Pure.
 */

/**
 * In or out for good: a hash of the trace id and evaluator id, read as a fraction in [0, 1), is below
 * the rate. Per evaluator, so two evaluators at 10% don't score the same tenth of the traffic.
 */
export function isSampled(traceId: string, evaluatorId: string, samplingRate: number): boolean {
  if (samplingRate >= 1) return true;
  const digest = crypto.createHash('sha256').update(`${evaluatorId}\u0000${traceId}`).digest();
  // 48 bits: exact in a double, and finer than any rate anyone sets.
  return digest.readUIntBE(0, 6) / 2 ** 48 < samplingRate;
}

/** The namespace of evaluator score ids (a fixed random UUID; changing it would orphan every score). */
const SCORE_NAMESPACE = Buffer.from('6f1d2c4a9b8e4f7d8c3a5e2b1d0f9a7c', 'hex');

/**
 * The score id of an evaluator's judgement of a trace (or one span of it): a name-based UUID (RFC
 * 9562 version 5) of evaluator, trace and span, so a re-run replaces the score rather than adding one.
 */
export function evaluatorScoreId(evaluatorId: string, traceId: string, spanId: string | null): string {
  const hash = crypto
    .createHash('sha1')
    .update(SCORE_NAMESPACE)
    .update(`${evaluatorId}\u0000${traceId}\u0000${spanId ?? ''}`)
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
