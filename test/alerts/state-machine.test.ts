import { describe, expect, it } from 'vitest';
import {
  FRESH,
  nextState,
  overallStatus,
  type Measurement,
  type SeriesState,
  type Settings,
} from '../../src/alerts/state-machine.js';
import { NO_DATA_MODES, OPERATORS, type NoDataMode, type Operator } from '../../src/alerts/schema.js';

/** Every transition of the pure state machine (src/alerts/state-machine.ts), no stores involved. */

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 22, 10, 0);
const settings = (over: Partial<Settings> = {}): Settings => ({
  operator: '>',
  threshold: 10,
  noDataMode: 'HOLD',
  renotify: { mode: 'OFF', intervalMinutes: 5 },
  ...over,
});
const state = (over: Partial<SeriesState> = {}): SeriesState => ({ ...FRESH, ...over });
const value = (v: number): Measurement => ({ kind: 'value', value: v });
const NO_DATA: Measurement = { kind: 'no_data' };
const failed = (message = 'Code: 159. Timeout exceeded'): Measurement => ({ kind: 'error', message });
const alerting = (at = T0) =>
  state({ status: 'ALERTING', announced: 'ALERTING', alertedAt: at, lastNotifiedAt: at, lastValue: 20 });

describe('OK ↔ ALERTING on the threshold', () => {
  it('OK → ALERTING notifies and stamps alerted_at', () => {
    const t = nextState(FRESH, value(12), settings(), T0);
    expect(t.notify).toBe(true);
    expect(t.next).toEqual({
      ...FRESH,
      status: 'ALERTING',
      announced: 'ALERTING',
      alertedAt: T0,
      lastNotifiedAt: T0,
      lastValue: 12,
    });
    expect(t.why).toBe('OK → ALERTING: 12 > 10');
  });

  it('OK stays OK quietly', () => {
    const t = nextState(FRESH, value(10), settings(), T0);
    expect(t).toEqual({ next: { ...FRESH, lastValue: 10 }, notify: false, why: 'stays OK: 10 not > 10' });
  });

  it('ALERTING → OK (recovery) notifies, keeping alerted_at as history', () => {
    const t = nextState(alerting(), value(3), settings(), T0 + MIN);
    expect(t.notify).toBe(true);
    expect(t.next).toMatchObject({
      status: 'OK',
      announced: 'OK',
      alertedAt: T0,
      lastNotifiedAt: T0 + MIN,
      lastValue: 3,
    });
  });

  it('ALERTING stays ALERTING without a second notification when renotify is OFF', () => {
    let s = alerting();
    for (let i = 1; i <= 120; i++) {
      const t = nextState(s, value(50), settings(), T0 + i * MIN);
      expect(t.notify).toBe(false);
      s = t.next;
    }
    expect(s).toMatchObject({ status: 'ALERTING', alertedAt: T0, lastNotifiedAt: T0, lastValue: 50 });
  });

  it('compares with each operator, the threshold itself included or not', () => {
    const expected: Record<Operator, [number, boolean][]> = {
      '>': [
        [11, true],
        [10, false],
        [9, false],
      ],
      '>=': [
        [11, true],
        [10, true],
        [9, false],
      ],
      '<': [
        [11, false],
        [10, false],
        [9, true],
      ],
      '<=': [
        [11, false],
        [10, true],
        [9, true],
      ],
      '=': [
        [11, false],
        [10, true],
        [9, false],
      ],
      '!=': [
        [11, true],
        [10, false],
        [9, true],
      ],
    };
    for (const operator of OPERATORS) {
      for (const [v, breached] of expected[operator]) {
        const t = nextState(FRESH, value(v), settings({ operator }), T0);
        expect([operator, v, t.next.status, t.notify]).toEqual([operator, v, breached ? 'ALERTING' : 'OK', breached]);
      }
    }
  });
});

describe('renotify', () => {
  it('INTERVAL re-sends every interval_minutes while ALERTING, counted in window ends', () => {
    let s = nextState(FRESH, value(20), settings({ renotify: { mode: 'INTERVAL', intervalMinutes: 5 } }), T0).next;
    const sent: number[] = [];
    for (let i = 1; i <= 16; i++) {
      const t = nextState(s, value(20), settings({ renotify: { mode: 'INTERVAL', intervalMinutes: 5 } }), T0 + i * MIN);
      if (t.notify) {
        sent.push(i);
        expect(t.why).toMatch(/^still ALERTING; renotify every 5 min/);
      }
      s = t.next;
    }
    expect(sent).toEqual([5, 10, 15]);
    expect(s.alertedAt).toBe(T0);
  });

  it('INTERVAL does not repeat OK or NO_DATA', () => {
    const every = settings({ renotify: { mode: 'INTERVAL', intervalMinutes: 1 }, noDataMode: 'NOTIFY' });
    const ok = nextState(state({ lastNotifiedAt: T0 }), value(1), every, T0 + 10 * MIN);
    expect(ok.notify).toBe(false);
    const quiet = nextState(
      state({ status: 'NO_DATA', announced: 'NO_DATA', lastNotifiedAt: T0 }),
      NO_DATA,
      every,
      T0 + 10 * MIN,
    );
    expect(quiet.notify).toBe(false);
  });
});

describe('a window with no data follows no_data_mode', () => {
  it('HOLD keeps every state and notifies nothing (renotify of a held ALERTING aside)', () => {
    for (const prev of [FRESH, alerting(), state({ status: 'NO_DATA', announced: 'NO_DATA' })]) {
      const t = nextState(prev, NO_DATA, settings({ noDataMode: 'HOLD' }), T0 + MIN);
      expect(t.notify).toBe(false);
      expect(t.next).toEqual(prev);
      expect(t.why).toBe(`stays ${prev.status}: no data; HOLD keeps ${prev.status}`);
    }
    const held = nextState(
      alerting(),
      NO_DATA,
      settings({ renotify: { mode: 'INTERVAL', intervalMinutes: 5 } }),
      T0 + 5 * MIN,
    );
    expect(held).toMatchObject({ notify: true, next: { status: 'ALERTING', lastNotifiedAt: T0 + 5 * MIN } });
  });

  it('HOLD out of ERROR, an edit or a resume goes back to the last announced state, without notifying', () => {
    for (const status of ['ERROR', 'OK'] as const) {
      const t = nextState(
        state({ status, announced: 'ALERTING', alertedAt: T0, lastNotifiedAt: T0 }),
        NO_DATA,
        settings(),
        T0 + MIN,
      );
      expect(t).toMatchObject({ notify: false, next: { status: 'ALERTING', announced: 'ALERTING', alertedAt: T0 } });
    }
  });

  it('ZERO compares 0 with the threshold: a volume alert (count < 1) fires on silence; a latency alert recovers', () => {
    const silence = nextState(FRESH, NO_DATA, settings({ noDataMode: 'ZERO', operator: '<', threshold: 1 }), T0);
    expect(silence).toMatchObject({ notify: true, next: { status: 'ALERTING', lastValue: 0 } });
    expect(silence.why).toBe('OK → ALERTING: no data; ZERO compares 0: 0 < 1');
    const recovered = nextState(alerting(), NO_DATA, settings({ noDataMode: 'ZERO' }), T0 + MIN);
    expect(recovered).toMatchObject({ notify: true, next: { status: 'OK', announced: 'OK', lastValue: 0 } });
  });

  it('NOTIFY goes NO_DATA and notifies once; data coming back notifies the state it brings', () => {
    const mode = settings({ noDataMode: 'NOTIFY' });
    const gone = nextState(FRESH, NO_DATA, mode, T0);
    expect(gone).toMatchObject({ notify: true, next: { status: 'NO_DATA', announced: 'NO_DATA', lastNotifiedAt: T0 } });
    expect(gone.why).toBe('OK → NO_DATA: no data in the window');
    const still = nextState(gone.next, NO_DATA, mode, T0 + MIN);
    expect(still.notify).toBe(false);
    const back = nextState(still.next, value(3), mode, T0 + 2 * MIN);
    expect(back).toMatchObject({ notify: true, next: { status: 'OK', announced: 'OK' } });
    const backAlerting = nextState(still.next, value(30), mode, T0 + 2 * MIN);
    expect(backAlerting).toMatchObject({
      notify: true,
      next: { status: 'ALERTING', announced: 'ALERTING', alertedAt: T0 + 2 * MIN },
    });
    const fromAlerting = nextState(alerting(), NO_DATA, mode, T0 + MIN);
    expect(fromAlerting).toMatchObject({
      notify: true,
      next: { status: 'NO_DATA', announced: 'NO_DATA', alertedAt: T0 },
    });
  });
});

describe('a failing evaluation', () => {
  it('goes ERROR with last_error and last_error_at, keeps what was announced, and notifies nothing', () => {
    for (const prev of [FRESH, alerting(), state({ status: 'NO_DATA', announced: 'NO_DATA' })]) {
      const t = nextState(prev, failed('boom'), settings(), T0 + MIN);
      expect(t).toEqual({
        next: { ...prev, status: 'ERROR', lastError: 'boom', lastErrorAt: T0 + MIN },
        notify: false,
        why: 'evaluation failed: boom',
      });
    }
  });

  it('recovers on the next good evaluation, announcing only a real change', () => {
    const broken = nextState(alerting(), failed(), settings(), T0 + MIN).next;
    const same = nextState(broken, value(30), settings(), T0 + 2 * MIN);
    expect(same).toMatchObject({
      notify: false,
      next: { status: 'ALERTING', alertedAt: T0, lastError: 'Code: 159. Timeout exceeded', lastErrorAt: T0 + MIN },
    });
    const changed = nextState(broken, value(1), settings(), T0 + 2 * MIN);
    expect(changed).toMatchObject({ notify: true, next: { status: 'OK', announced: 'OK' } });
    const again = nextState(broken, failed('second'), settings(), T0 + 2 * MIN);
    expect(again).toMatchObject({
      notify: false,
      next: { status: 'ERROR', lastError: 'second', lastErrorAt: T0 + 2 * MIN },
    });
  });
});

describe('paused and resumed', () => {
  it('PAUSED is never evaluated, whatever was measured', () => {
    const paused = state({ status: 'PAUSED', announced: 'ALERTING', lastNotifiedAt: T0 });
    for (const m of [value(100), value(0), NO_DATA, failed()]) {
      for (const noDataMode of NO_DATA_MODES) {
        expect(
          nextState(
            paused,
            m,
            settings({ noDataMode, renotify: { mode: 'INTERVAL', intervalMinutes: 1 } }),
            T0 + 60 * MIN,
          ),
        ).toEqual({ next: paused, notify: false, why: 'paused: not evaluated' });
      }
    }
  });

  it('after a resume (status OK, announcement kept) the first evaluation sends at most one notification', () => {
    // Alerting and announced, paused for a day, resumed: the service sets status OK and keeps `announced`.
    const resumed = { ...alerting(), status: 'OK' as const };
    const interval = settings({ renotify: { mode: 'INTERVAL', intervalMinutes: 5 } });
    const first = nextState(resumed, value(30), interval, T0 + 1440 * MIN);
    expect(first).toMatchObject({
      notify: true,
      next: { status: 'ALERTING', alertedAt: T0, lastNotifiedAt: T0 + 1440 * MIN },
    });
    expect(nextState(first.next, value(30), interval, T0 + 1441 * MIN).notify).toBe(false);
    // With renotify OFF, a still-alerting alert says nothing new; a recovered one says OK once.
    expect(nextState(resumed, value(30), settings(), T0 + 1440 * MIN).notify).toBe(false);
    const recovered = nextState(resumed, value(1), settings(), T0 + 1440 * MIN);
    expect(recovered.notify).toBe(true);
    expect(nextState(recovered.next, value(1), settings(), T0 + 1441 * MIN).notify).toBe(false);
  });
});

describe('every combination', () => {
  const prevs: SeriesState[] = [];
  for (const status of ['OK', 'ALERTING', 'NO_DATA', 'ERROR'] as const) {
    for (const announced of ['OK', 'ALERTING', 'NO_DATA'] as const)
      prevs.push(state({ status, announced, lastNotifiedAt: T0, alertedAt: announced === 'ALERTING' ? T0 : null }));
  }
  const measurements: Measurement[] = [value(20), value(5), NO_DATA, failed()];

  it('notifies exactly when the announced state changes or an ALERTING interval is due, never on ERROR', () => {
    for (const prev of prevs) {
      for (const m of measurements) {
        for (const noDataMode of NO_DATA_MODES as readonly NoDataMode[]) {
          for (const renotify of [
            { mode: 'OFF' as const, intervalMinutes: 5 },
            { mode: 'INTERVAL' as const, intervalMinutes: 5 },
          ]) {
            for (const now of [T0 + MIN, T0 + 5 * MIN]) {
              const t = nextState(prev, m, settings({ noDataMode, renotify }), now);
              const label = JSON.stringify({
                prev: [prev.status, prev.announced],
                m,
                noDataMode,
                renotify: renotify.mode,
                now: (now - T0) / MIN,
              });
              if (m.kind === 'error') {
                expect(t.notify, label).toBe(false);
                expect(t.next.status, label).toBe('ERROR');
                continue;
              }
              expect(t.next.status, label).not.toBe('ERROR');
              const changed = t.next.status !== prev.announced;
              const due = t.next.status === 'ALERTING' && renotify.mode === 'INTERVAL' && now - T0 >= 5 * MIN;
              expect(t.notify, label).toBe(changed || due);
              expect(t.next.announced, label).toBe(t.notify ? t.next.status : prev.announced);
              expect(t.next.lastNotifiedAt, label).toBe(t.notify ? now : T0);
            }
          }
        }
      }
    }
  });
});

describe('the alert-level status of several series', () => {
  it('is the most urgent one', () => {
    expect(overallStatus([])).toBe('OK');
    expect(overallStatus(['OK', 'OK'])).toBe('OK');
    expect(overallStatus(['OK', 'NO_DATA'])).toBe('NO_DATA');
    expect(overallStatus(['NO_DATA', 'ALERTING', 'OK'])).toBe('ALERTING');
    expect(overallStatus(['ALERTING', 'ERROR'])).toBe('ERROR');
  });
});
