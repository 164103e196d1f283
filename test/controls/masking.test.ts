import { describe, expect, it } from 'vitest';
import { performance } from 'node:perf_hooks';
import {
  compileMasking,
  DETECTORS,
  ibanValid,
  luhnValid,
  MaskingSetting,
  patternRefusal,
} from '../../src/controls/masking.js';

/** The masker (src/controls/masking.ts): each detector, each action, custom patterns on a linear-time engine. */
const KEY = Buffer.alloc(32, 7);
const all = (action: 'mask' | 'hash' | 'drop' = 'mask') =>
  compileMasking(MaskingSetting.parse({ detectors: [...DETECTORS], action }), KEY)!;

describe('masking detectors', () => {
  const cases: [string, string, string][] = [
    ['email', 'write to ann.lee+work@mail.example.co.uk today', 'write to [EMAIL] today'],
    ['phone (international)', 'call +44 20 7946 0958 now', 'call [PHONE] now'],
    ['phone (US)', 'call (415) 555-2671 or 415-555-2671', 'call [PHONE] or [PHONE]'],
    ['payment card (Luhn)', 'card 4111 1111 1111 1111 ok', 'card [CARD] ok'],
    ['payment card without spaces', 'card:5500005555555559.', 'card:[CARD].'],
    ['IBAN', 'IBAN DE89 3704 0044 0532 0130 00 please', 'IBAN [IBAN] please'],
    ['IPv4', 'from 192.168.10.254:8080', 'from [IP]:8080'],
    ['IPv6', 'from 2001:0db8:85a3:0000:0000:8a2e:0370:7334 and fe80::1ff:fe23:4567:890a', 'from [IP] and [IP]'],
    ['OpenAI key', 'key sk-proj-abcdefghijklmnopqrstuvwx1234', 'key [SECRET]'],
    ['bearer token', 'Authorization: Bearer abcdefghijklmnop1234567890', 'Authorization: [SECRET]'],
    ['AWS key', 'AKIAIOSFODNN7EXAMPLE', '[SECRET]'],
    [
      'JWT',
      'token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end',
      'token [JWT] end',
    ],
  ];
  for (const [name, text, masked] of cases)
    it(`masks ${name}`, () => {
      expect(all().maskText(text).text).toBe(masked);
    });

  it('leaves what only looks like one alone', () => {
    const m = all();
    for (const text of [
      'order 4111 1111 1111 1112 (fails Luhn)',
      'version 1.2.3.4.5',
      'at 12:30:45 on 2026-11-29',
      'DE89 3704 0044 0532 0130 01 is not a valid IBAN',
      'id 1234567890123456789012345',
      'span a1b2c3d4e5f6',
    ])
      expect(m.maskText(text)).toEqual({ text, count: 0 });
  });

  it('checks cards by Luhn and IBANs by mod 97', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(ibanValid('GB82WEST12345698765432')).toBe(true);
    expect(ibanValid('GB82WEST12345698765433')).toBe(false);
  });

  it('keeps a JSON text valid JSON, escapes and all', () => {
    const value = JSON.stringify({
      messages: [
        {
          role: 'user',
          content: 'mail:\nann@example.com\tcard\n4111111111111111 "quoted" \\ sk-abcdefghijklmnopqrstuvwxyz',
        },
      ],
    });
    const out = all().maskText(value, true).text!;
    const parsed = JSON.parse(out);
    expect(parsed.messages[0].content).toBe('mail:\n[EMAIL]\tcard\n[CARD] "quoted" \\ [SECRET]');
    // A number is masked as its digits; a text with nothing to mask keeps its exact form.
    expect(JSON.parse(all().maskText('{"card": 4111111111111111, "n": 1.5}', true).text!)).toEqual({
      card: '[CARD]',
      n: 1.5,
    });
    expect(all().maskText('{ "spaced" :  true }', true).text).toBe('{ "spaced" :  true }');
    // Escapes as other producers write them: \u escapes and an escaped slash before a token.
    const escaped = '{"c":"caf\\u00e9 ann@example.com,\\nbob@example.com \\/sk-abcdefghijklmnopqrstuvwxyz"}';
    expect(JSON.parse(all().maskText(escaped, true).text!)).toEqual({ c: 'café [EMAIL],\n[EMAIL] /[SECRET]' });
  });

  it('hash: a keyed hash, equal values alike, other keys differ', () => {
    const a = all('hash').maskText('ann@example.com and ann@example.com and bob@example.com').text!;
    const [first, second, third] = a.match(/\[EMAIL:[0-9a-f]{8}\]/g)!;
    expect(first).toBe(second);
    expect(third).not.toBe(first);
    const other = compileMasking(MaskingSetting.parse({ detectors: ['email'], action: 'hash' }), Buffer.alloc(32, 8))!;
    expect(other.maskText('ann@example.com').text).not.toBe(first);
  });

  it('drop: a field holding a match becomes null; others stay', () => {
    const m = all('drop');
    expect(m.maskText('mail ann@example.com')).toEqual({ text: null, count: 1 });
    expect(m.maskText('nothing here')).toEqual({ text: 'nothing here', count: 0 });
  });

  it('masks every field a span stores text in', () => {
    const m = compileMasking(MaskingSetting.parse({ detectors: ['email'], action: 'drop' }), KEY)!;
    const span = {
      input: '"ann@example.com"',
      output: '"fine"',
      error_message: 'no user bob@example.com',
      metadata: { customer: 'cy@example.com', plan: 'pro' },
      attributes: { 'ai.toolCall.args': '{"to":"eve@example.com"}', 'ai.toolCall.name': 'send' },
      events: [{ name: 'exception', time: 0, attributes: { 'exception.message': 'dee@example.com failed' } }],
    };
    const count = m.maskSpans([span as never]);
    expect(count).toBe(5);
    expect(span).toEqual({
      input: null,
      output: '"fine"',
      error_message: '',
      metadata: { plan: 'pro' },
      attributes: { 'ai.toolCall.name': 'send' },
      events: [{ name: 'exception', time: 0, attributes: {} }],
    });
  });
});

describe('custom patterns', () => {
  it('masks with the pattern name', () => {
    const m = compileMasking(
      MaskingSetting.parse({ patterns: [{ name: 'customer_id', pattern: 'CUST-[0-9]{6}' }] }),
      KEY,
    )!;
    expect(m.maskText('for CUST-123456 and CUST-12').text).toBe('for [PATTERN:customer_id] and CUST-12');
  });

  it('refuses what a linear-time engine cannot run, and empty matches', () => {
    expect(patternRefusal('(a)\\1')).toMatch(/linear-time engine/);
    expect(patternRefusal('(?<=a)b')).toMatch(/linear-time engine/);
    expect(patternRefusal('a*')).toMatch(/empty text/);
    expect(patternRefusal('[0-9]+')).toBeNull();
    const parsed = MaskingSetting.safeParse({ patterns: [{ name: 'x', pattern: '(x+)\\1' }] });
    expect(parsed.success).toBe(false);
  });

  it('a catastrophic-backtracking pattern runs in linear time', () => {
    // (a+)+$ against "aaaa…b" takes exponential time on a backtracking engine.
    const m = compileMasking(MaskingSetting.parse({ patterns: [{ name: 'evil', pattern: '(a+)+$' }] }), KEY)!;
    const text = `${'a'.repeat(50_000)}b`;
    const started = performance.now();
    expect(m.maskText(text).count).toBe(0);
    // Not a timing assertion on speed: a backtracking engine would not return at all.
    expect(performance.now() - started).toBeLessThan(60_000);
  });
});
