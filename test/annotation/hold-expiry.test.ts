import { describe, expect, it } from 'vitest';
import { call, PUBLIC, useHarness } from '../support/harness.js';
import { expectDetail } from '../support/expect.js';
import { annotationProject } from './setup.js';

/**
 * An expired hold frees an item (quality.md §3: a reviewer who walks away blocks nobody). The hold
 * lasts ANNOTATION_HOLD_SECONDS; 0 here, so every hold has expired by the next request.
 */
const h = useHarness({ ANNOTATION_HOLD_SECONDS: '0' });

describe('an expired hold', () => {
  it('frees the item for the next reviewer, and the first may no longer complete it', async () => {
    const p = await annotationProject(h());
    const req = (token: string, path: string, payload: unknown) =>
      call(h().api, {
        method: 'POST',
        url: `${PUBLIC}${path}`,
        token,
        query: { project_id: p.projectId },
        payload: payload as object,
      });
    const made = await req(p.owner.token, '/annotation-queues', {
      name: 'expiring',
      score_config_ids: [p.quality.id],
    });
    const q = made.json();
    await req(p.owner.token, `/annotation-queues/${q.id}/items`, {
      items: [{ trace_id: 'tr-1' }, { trace_id: 'tr-2' }],
    });

    const a = (await req(p.reviewerA.token, `/annotation-queues/${q.id}/next`, {})).json().item;
    expect(a.trace_id).toBe('tr-1');
    // A's hold has run out: B gets the same, oldest item.
    const b = (await req(p.reviewerB.token, `/annotation-queues/${q.id}/next`, {})).json().item;
    expect(b.id).toBe(a.id);
    // The listed item shows no live hold.
    const listed = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/annotation-queues/${q.id}/items`,
      token: p.viewer.token,
      query: { project_id: p.projectId },
    });
    expect(listed.json().data[0]).toMatchObject({ id: a.id, held_by: null, held_until: null, status: 'pending' });

    // With every hold expired, whoever completes first has it; the other then finds it completed.
    const score = { scores: [{ config_id: p.quality.id, string_value: 'bad' }] };
    const done = await req(p.reviewerB.token, `/annotation-queues/${q.id}/items/${a.id}/complete`, score);
    expect(done.statusCode, done.body).toBe(200);
    expectDetail(
      await req(p.reviewerA.token, `/annotation-queues/${q.id}/items/${a.id}/complete`, score),
      409,
      'the item is already completed',
    );
  });
});
