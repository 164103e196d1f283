import { describe, expect, it } from 'vitest';
import {
  call,
  createApiKey,
  createProject,
  projectWithKey,
  PUBLIC,
  publicGet,
  useHarness,
} from '../support/harness.js';
import { memberWithRole } from '../support/accounts.js';
import { expectDetail, expectValidationAt } from '../support/expect.js';
import { roleRefusal } from '../../src/auth/roles.js';

const h = useHarness();
const get = publicGet(h);
const send = (method: 'POST' | 'PATCH' | 'DELETE', token: string, url: string, payload?: unknown, headers = {}) =>
  call(h().api, { method, url: `${PUBLIC}${url}`, token, payload: payload as never, headers });

const path = (name: string) => `/prompts/${encodeURIComponent(name)}`;

async function create(token: string, body: Record<string, unknown>) {
  const res = await send('POST', token, '/prompts', { type: 'text', prompt: 'Hello {{name}}', ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

describe('prompts', () => {
  it('numbers immutable versions, keeps config and answers the newest without production', async () => {
    const { key } = await projectWithKey(h());
    const v1 = await create(key.key, { name: 'greet', config: { model: 'gpt-4o', temperature: 0.2 } });
    expect(v1).toMatchObject({
      name: 'greet',
      version: 1,
      type: 'text',
      prompt: 'Hello {{name}}',
      config: { model: 'gpt-4o', temperature: 0.2 },
      labels: ['latest'],
      commit_message: null,
      created_by: `api_key:${key.id}`,
    });
    const v2 = await create(key.key, { name: 'greet', prompt: 'Hi {{name}}!', commit_message: 'shorter' });
    expect(v2).toMatchObject({ version: 2, config: {}, labels: ['latest'], commit_message: 'shorter' });

    expect((await get(key.key, path('greet'))).json()).toMatchObject({ version: 2, prompt: 'Hi {{name}}!' });
    const first = await get(key.key, path('greet'), { version: '1' });
    expect(first.json()).toMatchObject({ version: 1, prompt: 'Hello {{name}}', labels: [] });
    expect((await get(key.key, path('greet'), { label: 'latest' })).json().version).toBe(2);

    const versions = await get(key.key, `${path('greet')}/versions`);
    expect(versions.json().data.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(versions.json().meta).toEqual({ page: 0, limit: 50, total: 2 });

    const list = await get(key.key, '/prompts');
    expect(list.json().data).toEqual([
      { name: 'greet', type: 'text', latest_version: 2, labels: ['latest'], updated_at: expect.any(String) },
    ]);
  });

  it('keeps chat prompts, and refuses a body whose prompt is not of its type', async () => {
    const { key } = await projectWithKey(h());
    const chat = await create(key.key, {
      name: 'chat',
      type: 'chat',
      prompt: [
        { role: 'system', content: 'You are {{persona}}.' },
        { role: 'user', content: '{{question}}' },
      ],
    });
    expect(chat.prompt).toEqual([
      { role: 'system', content: 'You are {{persona}}.' },
      { role: 'user', content: '{{question}}' },
    ]);
    const wrong = await send('POST', key.key, '/prompts', { name: 'x', type: 'chat', prompt: 'text' });
    expectValidationAt(wrong, ['body', 'prompt']);
    const compiled = await send('POST', key.key, `${path('chat')}/compile`, {
      variables: { persona: 'a pirate', question: 'Where?' },
    });
    expect(compiled.statusCode, compiled.body).toBe(200);
    expect(compiled.json().prompt).toEqual([
      { role: 'system', content: 'You are a pirate.' },
      { role: 'user', content: 'Where?' },
    ]);
  });

  it('moves labels between versions; production is the default fetch; latest cannot be set', async () => {
    const { owner, project, key } = await projectWithKey(h());
    await create(owner.token, { project_id: project.id, name: 'p', labels: ['production', 'staging'] });
    await create(key.key, { name: 'p', prompt: 'v2', labels: ['staging'] });
    const v1 = (await get(key.key, path('p'), { version: '1' })).json();
    expect(v1.labels).toEqual(['production']);
    expect((await get(key.key, path('p'))).json().version).toBe(1);
    expect((await get(key.key, path('p'), { label: 'staging' })).json()).toMatchObject({
      version: 2,
      labels: ['staging', 'latest'],
    });
    expectDetail(
      await get(key.key, path('p'), { label: 'nope' }),
      404,
      "no version of this prompt has the label 'nope'",
    );

    const moved = await send('PATCH', owner.token, `${path('p')}/versions/2?project_id=${project.id}`, {
      labels: ['production', 'staging'],
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().labels).toEqual(['production', 'staging', 'latest']);
    expect((await get(key.key, path('p'))).json().version).toBe(2);
    expect((await get(key.key, path('p'), { version: '1' })).json().labels).toEqual([]);

    // Labels not listed come off the version.
    const trimmed = await send('PATCH', owner.token, `${path('p')}/versions/2`, {
      project_id: project.id,
      labels: ['production'],
    });
    expect(trimmed.json().labels).toEqual(['production', 'latest']);
    expectDetail(await get(key.key, path('p'), { label: 'staging' }), 404);

    expectValidationAt(await send('PATCH', key.key, `${path('p')}/versions/1`, { labels: ['latest'] }), [
      'body',
      'labels',
      0,
    ]);
    expectValidationAt(await send('PATCH', key.key, `${path('p')}/versions/1`, { labels: ['Bad Label'] }), [
      'body',
      'labels',
      0,
    ]);
    expectDetail(
      await send('PATCH', key.key, `${path('p')}/versions/9`, { labels: ['x'] }),
      404,
      'prompt version not found',
    );
    expectDetail(await send('PATCH', key.key, `${path('q')}/versions/1`, { labels: ['x'] }), 404, 'prompt not found');
    expectValidationAt(await get(key.key, path('p'), { version: '1', label: 'x' }), ['query', 'label']);
  });

  it('two concurrent moves of one label leave it on exactly one version', async () => {
    const { key } = await projectWithKey(h());
    for (let i = 0; i < 4; i++) await create(key.key, { name: 'race', prompt: `v${i + 1}` });
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        [1, 2, 3, 4].map((v) => send('PATCH', key.key, `${path('race')}/versions/${v}`, { labels: ['canary'] })),
      );
      for (const res of answers) expect(res.statusCode, res.body).toBe(200);
      const versions = (await get(key.key, `${path('race')}/versions`)).json().data as { labels: string[] }[];
      expect(versions.filter((v) => v.labels.includes('canary'))).toHaveLength(1);
    }
    // Concurrent creates number their versions without a gap or a duplicate.
    const created = await Promise.all([1, 2, 3].map(() => create(key.key, { name: 'race', labels: ['canary'] })));
    expect(created.map((v) => v.version).sort()).toEqual([5, 6, 7]);
    const all = (await get(key.key, `${path('race')}/versions`)).json().data as { labels: string[] }[];
    expect(all.filter((v) => v.labels.includes('canary'))).toHaveLength(1);
  });

  it('compiles with variables, naming a missing one in a 422', async () => {
    const { key } = await projectWithKey(h());
    await create(key.key, { name: 'c', prompt: 'Dear {{ name }}, your {{item}} ({{count}}) {{name}}' });
    const ok = await send('POST', key.key, `${path('c')}/compile`, {
      variables: { name: 'Ann', item: 'order', count: 3, extra: 'ignored' },
    });
    expect(ok.json()).toEqual({ prompt: 'Dear Ann, your order (3) Ann' });
    const missing = await send('POST', key.key, `${path('c')}/compile`, { variables: { name: 'Ann' } });
    const entry = expectValidationAt(missing, ['body', 'variables', 'item']);
    expect(entry.msg).toBe("missing variable 'item'");
    expectValidationAt(missing, ['body', 'variables', 'count']);
    expectDetail(await send('POST', key.key, `${path('none')}/compile`, { variables: {} }), 404, 'prompt not found');
  });

  it('answers an ETag, and 304 to If-None-Match until the answer changes', async () => {
    const { key } = await projectWithKey(h());
    await create(key.key, { name: 'e' });
    const first = await get(key.key, path('e'));
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}${path('e')}`,
      token: key.key,
      headers: { 'if-none-match': etag },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(etag);
    await send('PATCH', key.key, `${path('e')}/versions/1`, { labels: ['beta'] });
    const changed = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}${path('e')}`,
      token: key.key,
      headers: { 'if-none-match': etag },
    });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
  });

  it('keeps folders in names, addressed URL-encoded', async () => {
    const { key } = await projectWithKey(h());
    await create(key.key, { name: 'support/billing/refund' });
    await create(key.key, { name: 'support/greeting' });
    await create(key.key, { name: 'agent' });
    const fetched = await get(key.key, path('support/billing/refund'));
    expect(fetched.statusCode, fetched.body).toBe(200);
    expect(fetched.json().name).toBe('support/billing/refund');
    expect((await get(key.key, '/prompts')).json().data.map((p: { name: string }) => p.name)).toEqual([
      'agent',
      'support/billing/refund',
      'support/greeting',
    ]);
    expectValidationAt(await send('POST', key.key, '/prompts', { name: 'a//b', type: 'text', prompt: '' }), [
      'body',
      'name',
    ]);
    expectValidationAt(await send('POST', key.key, '/prompts', { name: 'x'.repeat(257), type: 'text', prompt: '' }), [
      'body',
      'name',
    ]);
    const removed = await send('DELETE', key.key, path('support/greeting'));
    expectDetail(removed, 403, roleRefusal('ADMIN'));
  });

  it('writes need MEMBER, production moves and deletes need ADMIN', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const viewer = await memberWithRole(h(), owner, owner.workspace.id, 'VIEWER');
    const member = await memberWithRole(h(), owner, owner.workspace.id, 'MEMBER');
    const q = `?project_id=${project.id}`;
    expectDetail(
      await send('POST', viewer.token, `/prompts${q}`, { name: 'r', type: 'text', prompt: 'x' }),
      403,
      roleRefusal('MEMBER'),
    );
    const byMember = await send('POST', member.token, `/prompts${q}`, {
      name: 'r',
      type: 'text',
      prompt: 'x',
      labels: ['dev'],
    });
    expect(byMember.statusCode, byMember.body).toBe(201);
    expect(byMember.json().created_by).toBe(`user:${member.user.id}`);
    expect((await get(viewer.token, path('r'), { project_id: project.id })).statusCode).toBe(200);

    const refusal = `moving the 'production' label: ${roleRefusal('ADMIN')}`;
    expectDetail(
      await send('POST', member.token, `/prompts${q}`, {
        name: 'r',
        type: 'text',
        prompt: 'y',
        labels: ['production'],
      }),
      403,
      refusal,
    );
    expectDetail(await send('PATCH', key.key, `${path('r')}/versions/1`, { labels: ['production'] }), 403, refusal);
    expectDetail(
      await send('PATCH', member.token, `${path('r')}/versions/1${q}`, { labels: ['production'] }),
      403,
      refusal,
    );
    expect(
      (await send('PATCH', member.token, `${path('r')}/versions/1${q}`, { labels: ['dev', 'qa'] })).statusCode,
    ).toBe(200);
    expect(
      (await send('PATCH', owner.token, `${path('r')}/versions/1${q}`, { labels: ['production'] })).statusCode,
    ).toBe(200);
    // Taking production off a version is a move too.
    expectDetail(await send('PATCH', member.token, `${path('r')}/versions/1${q}`, { labels: [] }), 403, refusal);

    expectDetail(await send('DELETE', member.token, `${path('r')}${q}`), 403, roleRefusal('ADMIN'));
    const deleted = await send('DELETE', owner.token, `${path('r')}${q}`);
    expect(deleted.json()).toEqual({ deleted: true, id: 'r' });
    expectDetail(await get(key.key, path('r')), 404, 'prompt not found');
    // The name starts again at version 1.
    expect((await create(key.key, { name: 'r' })).version).toBe(1);
  });

  it("does not show or touch another project's prompts", async () => {
    const a = await projectWithKey(h());
    const other = await createProject(h(), a.owner.token, a.owner.workspace.id);
    const otherKey = await createApiKey(h(), a.owner.token, other.id);
    await create(a.key.key, { name: 'mine', labels: ['beta'] });
    expectDetail(await get(otherKey.key, path('mine')), 404, 'prompt not found');
    expect((await get(otherKey.key, '/prompts')).json().data).toEqual([]);
    expectDetail(await send('PATCH', otherKey.key, `${path('mine')}/versions/1`, { labels: ['x'] }), 404);
    expectDetail(await send('POST', otherKey.key, `${path('mine')}/compile`, { variables: { name: 'x' } }), 404);
    // The same name in the other project is its own prompt, numbered from 1.
    expect((await create(otherKey.key, { name: 'mine' })).version).toBe(1);
    expect((await get(a.key.key, path('mine'))).json().labels).toEqual(['beta', 'latest']);
  });

  it('replays a create sent again with its Idempotency-Key', async () => {
    const { key } = await projectWithKey(h());
    const body = { name: 'idem', type: 'text', prompt: 'x' };
    const first = await send('POST', key.key, '/prompts', body, { 'idempotency-key': 'k-1' });
    const second = await send('POST', key.key, '/prompts', body, { 'idempotency-key': 'k-1' });
    expect(first.statusCode).toBe(201);
    expect(second.json()).toEqual(first.json());
    expect((await get(key.key, path('idem'))).json().version).toBe(1);
  });
});
