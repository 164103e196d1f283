import type { Predicate } from '../../src/traces/filters.js';
import { iso } from '../support/ingest.js';

/** Fixtures of list-metadata.test.ts and list-metadata-migration.test.ts. */

export const HOUR = 3_600_000;
export const MIN = 60_000;
export const H = Math.floor(Date.now() / HOUR) * HOUR;
export type Span = Record<string, unknown>;

/** Trace starts, newest last: each trace in an hour of its own. */
export const T = {
  late: H - 5 * HOUR + MIN,
  colon: H - 4 * HOUR + MIN,
  odd: H - 3 * HOUR + MIN,
  resent: H - 2 * HOUR + MIN,
  orphan: H - HOUR + MIN,
};

export const QUOTED_KEY = 'say "hi"\\';
export const ODD_VALUE = 'line\nbreak\u0001 "quoted" \\ ünïcødé 😀';

/** First batch: children before their roots, the encoding's tricky characters, an orphan without a root. */
export const FIRST: Span[] = [
  // The late root's children, the root itself only in LATE_ROOT.
  {
    trace_id: 'tr-late',
    span_id: 'l-child',
    parent_span_id: 'l-root',
    name: 'child',
    user_id: 'u-child',
    session_id: 's-child',
    start_time: iso(T.late + 100),
    end_time: iso(T.late + 900),
    metadata: { tier: 'child-tier', only_child: 'yes' },
  },
  // Keys and values that concatenate alike: 'a:b' + 'c' against 'a' + 'b:c'; a digit-led key.
  {
    trace_id: 'tr-colon',
    span_id: 'c-root',
    name: 'Colon Root',
    start_time: iso(T.colon),
    end_time: iso(T.colon + 500),
    metadata: { 'a:b': 'c', '12': '3' },
  },
  {
    trace_id: 'tr-odd',
    span_id: 'o-root',
    name: 'Odd ✓ Root',
    start_time: iso(T.odd),
    end_time: iso(T.odd + 500),
    metadata: { [QUOTED_KEY]: ODD_VALUE, ключ: 'значение' },
  },
  {
    trace_id: 'tr-odd',
    span_id: 'o-child',
    parent_span_id: 'o-root',
    name: 'odd child',
    start_time: iso(T.odd + 10),
    end_time: iso(T.odd + 400),
    metadata: { a: 'b:c', '1': '23' },
  },
  {
    trace_id: 'tr-resent',
    span_id: 'r-root',
    name: 'Resent',
    start_time: iso(T.resent),
    end_time: iso(T.resent + 500),
    metadata: { team: 'payments' },
  },
  {
    trace_id: 'tr-resent',
    span_id: 'r-child',
    parent_span_id: 'r-root',
    name: 'resent child',
    start_time: iso(T.resent + 10),
    end_time: iso(T.resent + 100),
    cost: 0.25,
    metadata: { team: 'search', step: 'one' },
  },
  // No span without a parent: the earliest span stands in for the root.
  {
    trace_id: 'tr-orphan',
    span_id: 'x-early',
    parent_span_id: 'gone',
    name: 'early',
    start_time: iso(T.orphan),
    end_time: iso(T.orphan + 100),
    metadata: { tier: 'early-tier' },
  },
  {
    trace_id: 'tr-orphan',
    span_id: 'x-later',
    parent_span_id: 'gone',
    name: 'later',
    start_time: iso(T.orphan + 50),
    end_time: iso(T.orphan + 200),
    metadata: { tier: 'later-tier', extra: 'x' },
  },
];
/** Second batch: the late root, and two spans of tr-resent sent again. */
export const SECOND: Span[] = [
  {
    trace_id: 'tr-late',
    span_id: 'l-root',
    name: 'Late Root',
    user_id: 'u-root',
    start_time: iso(T.late),
    end_time: iso(T.late + 1000),
    metadata: { tier: 'root-tier' },
  },
  FIRST[4]!,
  FIRST[5]!,
];

/** Filters and the traces they must list, newest first. */
export const CASES: [string, Predicate[], string[]][] = [
  [
    "a late root's value wins over its child's",
    [{ field: 'metadata', op: 'eq', key: 'tier', value: 'root-tier' }],
    ['tr-late'],
  ],
  [
    'a child value the late root overrides no longer matches',
    [{ field: 'metadata', op: 'eq', key: 'tier', value: 'child-tier' }],
    [],
  ],
  [
    "a child-only key still matches after the root's arrival",
    [{ field: 'metadata', op: 'eq', key: 'only_child', value: 'yes' }],
    ['tr-late'],
  ],
  ['contains on a late root', [{ field: 'metadata', op: 'contains', key: 'tier', value: 'root' }], ['tr-late']],
  [
    'contains does not see an overridden child value',
    [{ field: 'metadata', op: 'contains', key: 'tier', value: 'child' }],
    [],
  ],
  [
    'the earliest span stands in for a missing root',
    [{ field: 'metadata', op: 'eq', key: 'tier', value: 'early-tier' }],
    ['tr-orphan'],
  ],
  [
    "a later orphan span's overridden value does not match",
    [{ field: 'metadata', op: 'eq', key: 'tier', value: 'later-tier' }],
    [],
  ],
  ["a later orphan span's own key matches", [{ field: 'metadata', op: 'eq', key: 'extra', value: 'x' }], ['tr-orphan']],
  ["a key with ':' matches only itself", [{ field: 'metadata', op: 'eq', key: 'a:b', value: 'c' }], ['tr-colon']],
  ["a value with ':' matches only its own key", [{ field: 'metadata', op: 'eq', key: 'a', value: 'b:c' }], ['tr-odd']],
  [
    'a digit key is not confused with the length prefix',
    [{ field: 'metadata', op: 'eq', key: '1', value: '23' }],
    ['tr-odd'],
  ],
  ['and the other way round', [{ field: 'metadata', op: 'eq', key: '12', value: '3' }], ['tr-colon']],
  [
    'a key with quotes and a backslash, a value with control characters',
    [{ field: 'metadata', op: 'eq', key: QUOTED_KEY, value: ODD_VALUE }],
    ['tr-odd'],
  ],
  [
    'contains inside such a value',
    [{ field: 'metadata', op: 'contains', key: QUOTED_KEY, value: '\u0001 "quoted" \\ ünï' }],
    ['tr-odd'],
  ],
  ['non-ASCII key and value', [{ field: 'metadata', op: 'eq', key: 'ключ', value: 'значение' }], ['tr-odd']],
  ['contains is case-sensitive', [{ field: 'metadata', op: 'contains', key: 'ключ', value: 'ЗНАЧ' }], []],
  ['a value under another key does not match', [{ field: 'metadata', op: 'contains', key: 'a:b', value: 'b:c' }], []],
  [
    'the root wins over a child after re-sends',
    [{ field: 'metadata', op: 'eq', key: 'team', value: 'payments' }],
    ['tr-resent'],
  ],
  [
    'an overridden child value of a re-sent trace does not match',
    [{ field: 'metadata', op: 'eq', key: 'team', value: 'search' }],
    [],
  ],
  [
    're-sent spans are counted once',
    [
      { field: 'cost', op: 'eq', value: 0.25 },
      { field: 'metadata', op: 'eq', key: 'step', value: 'one' },
    ],
    ['tr-resent'],
  ],
];
