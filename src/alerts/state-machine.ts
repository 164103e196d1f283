import type { AlertStatus, NoDataMode, Operator, RenotifyMode } from './schema.js';

/**
 * The alert state machine, one pure function (issue 10, "State machine"): the previous state of a
 * series (the alert, or one group of it), what this window measured, the alert's settings and the
 * window's end → the next state, whether to notify, and why.
 *
 * - A value is compared with the threshold: OK ↔ ALERTING.
 * - A window that measured nothing follows `no_data_mode`: HOLD keeps the state, ZERO compares 0,
 *   NOTIFY goes NO_DATA.
 * - A failed query goes ERROR (recording the error); the next good evaluation leaves it.
 * - PAUSED is never evaluated: the state comes back unchanged.
 *
 * Notifications are decided against `announced`, what receivers were last told, not against the
 * previous status: a transition to a state other than the announced one notifies (OK → ALERTING,
 * recovery ALERTING → OK, → NO_DATA and back), and a state that merely went through ERROR, or was
 * reset by an edit or a resume, is not announced twice. Renotify INTERVAL repeats ALERTING every
 * `interval_minutes` (counted in window ends, so whole minutes); OFF notifies on transitions only.
 * ERROR itself does not notify: it is a fault of ours or of the store, not of what is watched, and is
 * shown in `last_error`.
 *
 * Times are epoch ms of window ends: the function never reads a clock.
 */

export type Announced = 'OK' | 'ALERTING' | 'NO_DATA';
export type SeriesStatus = Exclude<AlertStatus, 'PAUSED'>;

export type SeriesState = {
  status: SeriesStatus | 'PAUSED';
  announced: Announced;
  alertedAt: number | null;
  lastNotifiedAt: number | null;
  lastValue: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
};

export type Measurement = { kind: 'value'; value: number } | { kind: 'no_data' } | { kind: 'error'; message: string };

export type Settings = {
  operator: Operator;
  threshold: number;
  noDataMode: NoDataMode;
  renotify: { mode: RenotifyMode; intervalMinutes: number };
};

export type Transition = { next: SeriesState; notify: boolean; why: string };

/** A series never evaluated: OK, nothing announced yet (receivers assume OK). */
export const FRESH: SeriesState = {
  status: 'OK',
  announced: 'OK',
  alertedAt: null,
  lastNotifiedAt: null,
  lastValue: null,
  lastError: null,
  lastErrorAt: null,
};

export function breaches(value: number, operator: Operator, threshold: number): boolean {
  switch (operator) {
    case '>':
      return value > threshold;
    case '>=':
      return value >= threshold;
    case '<':
      return value < threshold;
    case '<=':
      return value <= threshold;
    case '=':
      return value === threshold;
    case '!=':
      return value !== threshold;
  }
}

const MINUTE_MS = 60_000;

export function nextState(prev: SeriesState, measured: Measurement, settings: Settings, now: number): Transition {
  if (prev.status === 'PAUSED') return { next: prev, notify: false, why: 'paused: not evaluated' };
  if (measured.kind === 'error') {
    return {
      next: { ...prev, status: 'ERROR', lastError: measured.message, lastErrorAt: now },
      notify: false,
      why: `evaluation failed: ${measured.message}`,
    };
  }

  let target: Announced;
  let value: number | null = null;
  let reason: string;
  if (measured.kind === 'no_data' && settings.noDataMode === 'HOLD') {
    // The state kept is the last announced one: it equals the status after any evaluation, and after
    // an ERROR, an edit or a resume (which reset the status) it is the last state known from data.
    target = prev.announced;
    reason = `no data; HOLD keeps ${target}`;
  } else if (measured.kind === 'no_data' && settings.noDataMode === 'NOTIFY') {
    target = 'NO_DATA';
    reason = 'no data in the window';
  } else {
    value = measured.kind === 'value' ? measured.value : 0;
    const breached = breaches(value, settings.operator, settings.threshold);
    target = breached ? 'ALERTING' : 'OK';
    const compared = `${value} ${breached ? '' : 'not '}${settings.operator} ${settings.threshold}`;
    reason = measured.kind === 'no_data' ? `no data; ZERO compares 0: ${compared}` : compared;
  }

  const next: SeriesState = {
    ...prev,
    status: target,
    lastValue: value ?? prev.lastValue,
    // alerted_at is when the series last became ALERTING; it stays as history afterwards.
    alertedAt: target === 'ALERTING' && prev.announced !== 'ALERTING' ? now : prev.alertedAt,
  };
  if (target !== prev.announced) {
    return {
      next: { ...next, announced: target, lastNotifiedAt: now },
      notify: true,
      why: `${prev.announced} → ${target}: ${reason}`,
    };
  }
  const interval = settings.renotify.intervalMinutes * MINUTE_MS;
  if (
    target === 'ALERTING' &&
    settings.renotify.mode === 'INTERVAL' &&
    (prev.lastNotifiedAt === null || now - prev.lastNotifiedAt >= interval)
  ) {
    return {
      next: { ...next, lastNotifiedAt: now },
      notify: true,
      why: `still ALERTING; renotify every ${settings.renotify.intervalMinutes} min: ${reason}`,
    };
  }
  return { next, notify: false, why: `stays ${target}: ${reason}` };
}

/**
 * The status an alert shows for its series: the most urgent of them. ERROR only when this
 * evaluation failed (the caller knows); PAUSED is the alert's own.
 */
export function overallStatus(statuses: SeriesStatus[]): SeriesStatus {
  for (const s of ['ERROR', 'ALERTING', 'NO_DATA'] as const) if (statuses.includes(s)) return s;
  return 'OK';
}
