import { z } from 'zod';
import { Count, DateTime, page } from '../answer-schemas.js';
import { RCA_STATES, SIGNAL_STATUSES } from './service.js';

/** The answers of the signal and finding routes (docs/signals.md). */

const Status = z.enum(SIGNAL_STATUSES);

/** A signal, list-item form (docs/signals.md, "Signals"). */
export const SignalListItemAnswer = z
  .object({
    signal_id: z.string(),
    detector_id: z.string(),
    detector_name: z.string(),
    title: z.string(),
    status: Status,
    created_at: DateTime,
    first_seen_at: DateTime,
    last_seen_at: DateTime,
    hit_count: Count,
    reopen_count: Count,
    rca_state: z.enum(RCA_STATES),
  })
  .meta({ id: 'SignalListItem' });

const RcaAnswer = z.object({
  generated_at: DateTime,
  hints: z.array(
    z.object({
      attribute: z.string(),
      value: z.string(),
      signal_share: z.number(),
      baseline_share: z.number(),
      lift: z.number(),
    }),
  ),
  error: z.string().optional(),
});

/** A signal, detail form (docs/signals.md, "Signals"); `rca` (root-cause hints, once ready) is an addition. */
export const SignalDetailAnswer = SignalListItemAnswer.extend({
  resolved_at: DateTime.nullable().describe('when it was resolved; null while it never was'),
  merged_into_id: z.string().nullable().describe('set when the signal was merged'),
  rca: RcaAnswer.nullable(),
}).meta({ id: 'SignalDetail' });

export const SignalListAnswer = page(SignalListItemAnswer).meta({ id: 'SignalList' });

/** The answer of a status change (docs/signals.md, "Signal status"). */
export const StatusChangeAnswer = z
  .object({
    signal: z.object({
      detector_id: z.string(),
      project_id: z.string(),
      reopen_count: Count,
      resolved_at: DateTime.nullable(),
      signal_id: z.string(),
      status: Status,
      title: z.string(),
    }),
    updated: z.boolean(),
    changed: z.array(z.string()),
  })
  .meta({ id: 'SignalStatusChange' });

/** docs/signals.md "Findings". */
export const FindingListAnswer = page(
  z.object({
    finding_id: z.string(),
    signal_id: z.string(),
    detector_id: z.string(),
    trace_id: z.string(),
    span_id: z.string().nullable(),
    trace_start_time: DateTime,
    found_at: DateTime,
    summary: z.string(),
  }),
).meta({ id: 'FindingList' });
