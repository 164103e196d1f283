import { describe, expect, it } from 'vitest';
import {
  call,
  createApiKey,
  createProject,
  projectWithKey,
  PUBLIC,
  signUp,
  useHarness,
  type Harness,
  type SignedUp,
} from '../support/harness.js';
import { OVERVIEW_WIDGETS, specIssues, type WidgetType } from '../../src/widgets/spec.js';
import { USER_LOGIN_REQUIRED_DETAIL } from '../../src/auth/principal.js';
import { PROJECT_ID_REQUIRED_DETAIL } from '../../src/auth/access.js';

const h = useHarness();

type Res = Awaited<ReturnType<typeof call>>;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const VALID_SPEC = {
  view: 'SPANS',
  measure: 'cost',
  aggregation: 'sum',
  group_by: ['model_name'],
  interval: '1h',
  limit: 10,
};
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

function listDashboards(token: string, query: Record<string, string> = {}) {
  return call(h().api, { method: 'GET', url: `${PUBLIC}/dashboards`, token, query });
}
function getDashboard(token: string, id: string, query: Record<string, string> = {}) {
  return call(h().api, { method: 'GET', url: `${PUBLIC}/dashboards/${id}`, token, query });
}
function postDashboard(token: string, payload: Record<string, unknown>) {
  return call(h().api, { method: 'POST', url: `${PUBLIC}/dashboards`, token, payload });
}
function patchDashboard(token: string, id: string, payload: Record<string, unknown>) {
  return call(h().api, { method: 'PATCH', url: `${PUBLIC}/dashboards/${id}`, token, payload });
}
function deleteDashboard(token: string, id: string, query: Record<string, string>) {
  return call(h().api, { method: 'DELETE', url: `${PUBLIC}/dashboards/${id}`, token, query });
}
function getWidget(token: string, id: string, query: Record<string, string> = {}) {
  return call(h().api, { method: 'GET', url: `${PUBLIC}/widgets/${id}`, token, query });
}
function postWidget(token: string, payload: Record<string, unknown>) {
  return call(h().api, { method: 'POST', url: `${PUBLIC}/widgets`, token, payload });
}
function patchWidget(token: string, id: string, payload: Record<string, unknown>) {
  return call(h().api, { method: 'PATCH', url: `${PUBLIC}/widgets/${id}`, token, payload });
}
function deleteWidget(token: string, id: string, query: Record<string, string>) {
  return call(h().api, { method: 'DELETE', url: `${PUBLIC}/widgets/${id}`, token, query });
}

/** A user with a project of theirs. */
async function ownerWithProject(label = 'owner') {
  const owner = await signUp(h(), label);
  const project = await createProject(h(), owner.token, owner.workspace.id);
  return { owner, project };
}

async function memberWithRole(
  harness: Harness,
  admin: SignedUp,
  workspaceId: string,
  role: 'VIEWER' | 'MEMBER' | 'ADMIN',
) {
  const user = await signUp(harness, role.toLowerCase());
  const res = await call(harness.api, {
    method: 'POST',
    url: `${PUBLIC}/workspaces/${workspaceId}/members`,
    token: admin.token,
    payload: { email: user.user.email, role },
  });
  expect(res.statusCode).toBe(201);
  return user;
}

async function createdDashboard(token: string, projectId: string, name = 'Costs', description?: string) {
  const res = await postDashboard(token, {
    project_id: projectId,
    name,
    ...(description === undefined ? {} : { description }),
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function createdWidget(
  token: string,
  projectId: string,
  dashboardId: string,
  title = 'Spend',
  type: WidgetType = 'timeseries',
  spec: unknown = VALID_SPEC,
) {
  const res = await postWidget(token, { project_id: projectId, dashboard_id: dashboardId, title, type, spec });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

function expectValidationAt(res: Res, loc: (string | number)[]) {
  expect(res.statusCode, res.body).toBe(422);
  const detail = res.json().detail as { loc: unknown[]; msg: string; type: string }[];
  const entry = detail.find((d) => JSON.stringify(d.loc) === JSON.stringify(loc));
  expect(entry, `no 422 entry at ${JSON.stringify(loc)} in ${res.body}`).toBeDefined();
  expect(typeof entry!.msg).toBe('string');
  return entry!;
}

function expectDetail(res: Res, status: number, detail?: string) {
  expect(res.statusCode, res.body).toBe(status);
  if (detail === undefined) expect(typeof res.json().detail).toBe('string');
  else expect(res.json()).toEqual({ detail });
}

describe('the default dashboard', () => {
  it('exists right after the project is created: "Overview" with the 9 Overview widgets in order, all valid', async () => {
    const { owner, project } = await ownerWithProject('overview');
    const list = await listDashboards(owner.token, { project_id: project.id });
    expect(list.statusCode).toBe(200);
    expect(list.json().data).toEqual([
      {
        id: expect.any(String),
        name: 'Overview',
        description: 'Volume, errors, latency, cost and tokens; cost by model and by user',
        is_default: true,
        creator: owner.user.name,
        create_time: expect.stringMatching(ISO),
        update_time: expect.stringMatching(ISO),
        widget_count: 9,
      },
    ]);
    const overview = list.json().data[0];
    const detail = await getDashboard(owner.token, overview.id, { project_id: project.id });
    expect(detail.statusCode).toBe(200);
    const { widget_count: _count, ...fields } = overview;
    expect(detail.json()).toEqual({ ...fields, widgets: expect.any(Array) });
    const widgets = detail.json().widgets as {
      id: string;
      title: string;
      type: WidgetType;
      spec: unknown;
      create_time: string;
    }[];
    expect(widgets.map(({ title, type, spec }) => ({ title, type, spec }))).toEqual(OVERVIEW_WIDGETS);
    for (const w of widgets) {
      expect(Object.keys(w).sort()).toEqual(['create_time', 'id', 'spec', 'title', 'type']);
      expect(w.create_time).toMatch(ISO);
      expect(specIssues(w.type, w.spec)).toEqual([]);
    }
    // It exists in the store itself, not only once read.
    const { rows } = await h().ctx.pg.pool.query(
      'SELECT count(*)::int AS n FROM dashboards WHERE project_id = $1 AND is_default',
      [project.id],
    );
    expect(rows[0].n).toBe(1);
  });

  it('is created again, once, on the first read of a project that has none (its default was deleted in SQL)', async () => {
    const { owner, project } = await ownerWithProject('ensure');
    const original = (await listDashboards(owner.token, { project_id: project.id })).json().data[0];
    await h().ctx.pg.pool.query('DELETE FROM dashboards WHERE project_id = $1 AND is_default', [project.id]);
    // Several first reads at once still make one default dashboard with one set of widgets.
    const reads = await Promise.all([1, 2, 3].map(() => listDashboards(owner.token, { project_id: project.id })));
    for (const res of reads) expect(res.statusCode).toBe(200);
    const ids = new Set(reads.map((res) => res.json().data[0].id));
    expect(ids.size).toBe(1);
    const again = reads[0]!.json().data;
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({ name: 'Overview', is_default: true, widget_count: 9, creator: owner.user.name });
    expect(again[0].id).not.toBe(original.id);
    const { rows } = await h().ctx.pg.pool.query(
      'SELECT count(DISTINCT d.id)::int AS dashboards, count(w.id)::int AS widgets FROM dashboards d LEFT JOIN widgets w ON w.dashboard_id = d.id WHERE d.project_id = $1',
      [project.id],
    );
    expect(rows[0]).toEqual({ dashboards: 1, widgets: 9 });
    const later = await listDashboards(owner.token, { project_id: project.id });
    expect(later.json().data.map((d: { id: string }) => d.id)).toEqual([again[0].id]);
  });

  it('cannot be deleted (409) but can be renamed', async () => {
    const { owner, project } = await ownerWithProject('keep');
    const overview = (await listDashboards(owner.token, { project_id: project.id })).json().data[0];
    const res = await deleteDashboard(owner.token, overview.id, { project_id: project.id });
    expectDetail(res, 409);
    expect(res.json().detail).toMatch(/default dashboard/);
    expect((await getDashboard(owner.token, overview.id, { project_id: project.id })).statusCode).toBe(200);
    const renamed = await patchDashboard(owner.token, overview.id, { project_id: project.id, name: 'Health' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ id: overview.id, name: 'Health', is_default: true });
  });
});

describe('list and read dashboards', () => {
  it('lists the default first, then by creation time, with each widget_count', async () => {
    const { owner, project } = await ownerWithProject('order');
    const first = await createdDashboard(owner.token, project.id, 'A first');
    const second = await createdDashboard(owner.token, project.id, 'B second');
    await createdWidget(owner.token, project.id, second.id, 'one');
    await createdWidget(owner.token, project.id, second.id, 'two', 'markdown', '# notes');
    // Even if the default were younger than the others it stays first.
    await h().ctx.pg.pool.query(
      "UPDATE dashboards SET create_time = now() + interval '1 day' WHERE project_id = $1 AND is_default",
      [project.id],
    );
    const data = (await listDashboards(owner.token, { project_id: project.id })).json().data as {
      id: string;
      name: string;
      is_default: boolean;
      widget_count: number;
    }[];
    expect(data.map((d) => [d.name, d.is_default, d.widget_count])).toEqual([
      ['Overview', true, 9],
      ['A first', false, 0],
      ['B second', false, 2],
    ]);
    expect(data.slice(1).map((d) => d.id)).toEqual([first.id, second.id]);
  });

  it("answers a dashboard's detail with its widgets ordered by creation time", async () => {
    const { owner, project } = await ownerWithProject('detail');
    const dashboard = await createdDashboard(owner.token, project.id, 'Costs', 'What we spend');
    const a = await createdWidget(owner.token, project.id, dashboard.id, 'a');
    const b = await createdWidget(owner.token, project.id, dashboard.id, 'b', 'stat', {
      view: 'TRACES',
      measure: 'count',
      aggregation: 'count',
    });
    const c = await createdWidget(owner.token, project.id, dashboard.id, 'c', 'markdown', { text: 'hello' });
    const res = await getDashboard(owner.token, dashboard.id, { project_id: project.id });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: dashboard.id,
      name: 'Costs',
      description: 'What we spend',
      is_default: false,
      creator: owner.user.name,
      create_time: dashboard.create_time,
      update_time: dashboard.update_time,
      widgets: [a, b, c].map((w) => ({
        id: w.id,
        title: w.title,
        type: w.type,
        spec: w.spec,
        create_time: w.create_time,
      })),
    });
    expect(a.create_time <= b.create_time && b.create_time <= c.create_time).toBe(true);
  });

  it('names the creator by display name, by e-mail when the name is empty, and null once the account is deleted', async () => {
    const { owner, project } = await ownerWithProject('creator');
    const member = await memberWithRole(h(), owner, owner.workspace.id, 'MEMBER');
    const byMember = await createdDashboard(member.token, project.id, 'by member');
    expect(byMember.creator).toBe(member.user.name);
    const creatorOf = async (id: string) =>
      (await getDashboard(owner.token, id, { project_id: project.id })).json().creator;

    await h().ctx.pg.pool.query("UPDATE users SET name = '' WHERE id = $1", [member.user.id]);
    expect(await creatorOf(byMember.id)).toBe(member.user.email);
    await h().ctx.pg.pool.query('DELETE FROM users WHERE id = $1', [member.user.id]);
    expect(await creatorOf(byMember.id)).toBeNull();
    const listed = (await listDashboards(owner.token, { project_id: project.id }))
      .json()
      .data.find((d: { id: string }) => d.id === byMember.id);
    expect(listed.creator).toBeNull();
  });

  it('answers reads with an API key (project_id optional) and with a VIEWER login', async () => {
    const { owner, project, key } = await projectWithKey(h(), 'keyread');
    const dashboard = await createdDashboard(owner.token, project.id);
    const widget = await createdWidget(owner.token, project.id, dashboard.id);
    const viewer = await memberWithRole(h(), owner, owner.workspace.id, 'VIEWER');
    const fromOwner = (await listDashboards(owner.token, { project_id: project.id })).json();
    for (const [token, query] of [
      [key.key, {}],
      [key.key, { project_id: project.id }],
      [viewer.token, { project_id: project.id }],
    ] as const) {
      const list = await listDashboards(token, query);
      expect(list.statusCode).toBe(200);
      expect(list.json()).toEqual(fromOwner);
      expect((await getDashboard(token, dashboard.id, query)).statusCode).toBe(200);
      const w = await getWidget(token, widget.id, query);
      expect(w.statusCode).toBe(200);
      expect(w.json()).toEqual(widget);
    }
  });

  it('applies the read rules: user without project_id 400, key with another project 400, outsider 403', async () => {
    const { owner, project, key } = await projectWithKey(h(), 'rules');
    const other = await ownerWithProject('otherrules');
    expectDetail(await listDashboards(owner.token), 400, PROJECT_ID_REQUIRED_DETAIL);
    expectDetail(await listDashboards(key.key, { project_id: other.project.id }), 400);
    expectDetail(await listDashboards(other.owner.token, { project_id: project.id }), 403);
    expectDetail(await listDashboards('not-a-credential', { project_id: project.id }), 401);
  });

  it("answers 404 for an unknown dashboard or widget, and for another project's", async () => {
    const { owner, project } = await ownerWithProject('isolation');
    const other = await ownerWithProject('elsewhere');
    const theirs = await createdDashboard(other.owner.token, other.project.id, 'theirs');
    const theirWidget = await createdWidget(other.owner.token, other.project.id, theirs.id);
    // The owner of both projects asks for the other one's dashboard through their own project.
    const both = await memberWithRole(h(), other.owner, other.owner.workspace.id, 'MEMBER');
    await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces/${owner.workspace.id}/members`,
      token: owner.token,
      payload: { email: both.user.email, role: 'MEMBER' },
    });
    const q = { project_id: project.id };
    for (const token of [owner.token, both.token]) {
      expectDetail(await getDashboard(token, theirs.id, q), 404, 'dashboard not found');
      expectDetail(await getWidget(token, theirWidget.id, q), 404, 'widget not found');
    }
    expectDetail(await getDashboard(owner.token, UNKNOWN_ID, q), 404, 'dashboard not found');
    expectDetail(await getDashboard(owner.token, 'not-a-uuid', q), 404, 'dashboard not found');
    expectDetail(await getWidget(owner.token, UNKNOWN_ID, q), 404, 'widget not found');
    expectDetail(await getWidget(owner.token, 'not-a-uuid', q), 404, 'widget not found');
    // Writes through the wrong project find nothing either, and change nothing.
    expectDetail(
      await patchDashboard(both.token, theirs.id, { project_id: project.id, name: 'x' }),
      404,
      'dashboard not found',
    );
    expectDetail(await deleteDashboard(both.token, theirs.id, q), 404, 'dashboard not found');
    expectDetail(
      await postWidget(both.token, {
        project_id: project.id,
        dashboard_id: theirs.id,
        title: 't',
        type: 'markdown',
        spec: {},
      }),
      404,
      'dashboard not found',
    );
    expectDetail(
      await patchWidget(both.token, theirWidget.id, { project_id: project.id, title: 'x' }),
      404,
      'widget not found',
    );
    expectDetail(await deleteWidget(both.token, theirWidget.id, q), 404, 'widget not found');
    const still = await getDashboard(other.owner.token, theirs.id, { project_id: other.project.id });
    expect(still.json()).toMatchObject({ name: 'theirs', widgets: [{ id: theirWidget.id, title: theirWidget.title }] });
  });
});

describe('dashboard writes', () => {
  it('creates (201, detail with no widgets), edits (200, update_time bumps) and deletes (200) a dashboard', async () => {
    const { owner, project } = await ownerWithProject('dwrite');
    const created = await postDashboard(owner.token, { project_id: project.id, name: '  Latency  ' });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body).toEqual({
      id: expect.any(String),
      name: 'Latency',
      description: '',
      is_default: false,
      creator: owner.user.name,
      create_time: expect.stringMatching(ISO),
      update_time: body.create_time,
      widgets: [],
    });

    const edited = await patchDashboard(owner.token, body.id, { project_id: project.id, description: 'p95 by model' });
    expect(edited.statusCode).toBe(200);
    expect(edited.json()).toEqual({ ...body, description: 'p95 by model', update_time: expect.stringMatching(ISO) });
    expect(Date.parse(edited.json().update_time)).toBeGreaterThan(Date.parse(body.update_time));
    const renamed = await patchDashboard(owner.token, body.id, { project_id: project.id, name: 'Speed' });
    expect(renamed.json()).toMatchObject({ name: 'Speed', description: 'p95 by model' });

    const widget = await createdWidget(owner.token, project.id, body.id);
    const deleted = await deleteDashboard(owner.token, body.id, { project_id: project.id });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ deleted: true, id: body.id });
    expectDetail(await getDashboard(owner.token, body.id, { project_id: project.id }), 404, 'dashboard not found');
    // Its widgets went with it.
    expectDetail(await getWidget(owner.token, widget.id, { project_id: project.id }), 404, 'widget not found');
    expectDetail(await deleteDashboard(owner.token, body.id, { project_id: project.id }), 404, 'dashboard not found');
  });

  it('validates the body: name 1 to 200, description at most 2000, project_id required', async () => {
    const { owner, project } = await ownerWithProject('dvalid');
    expectValidationAt(await postDashboard(owner.token, { project_id: project.id, name: '' }), ['body', 'name']);
    expectValidationAt(await postDashboard(owner.token, { project_id: project.id, name: '   ' }), ['body', 'name']);
    expectValidationAt(await postDashboard(owner.token, { project_id: project.id, name: 'x'.repeat(201) }), [
      'body',
      'name',
    ]);
    expectValidationAt(
      await postDashboard(owner.token, { project_id: project.id, name: 'ok', description: 'x'.repeat(2001) }),
      ['body', 'description'],
    );
    expectValidationAt(await postDashboard(owner.token, { name: 'ok' }), ['body', 'project_id']);
    expect(
      (
        await postDashboard(owner.token, {
          project_id: project.id,
          name: 'x'.repeat(200),
          description: 'x'.repeat(2000),
        })
      ).statusCode,
    ).toBe(201);
    const overview = (await listDashboards(owner.token, { project_id: project.id })).json().data[0];
    expectValidationAt(await patchDashboard(owner.token, overview.id, { project_id: project.id, name: '' }), [
      'body',
      'name',
    ]);
    expectValidationAt(await deleteDashboard(owner.token, overview.id, {}), ['query', 'project_id']);
  });

  it("answers 404 for an unknown project and 403 for a project outside the caller's workspaces", async () => {
    const { owner } = await ownerWithProject('dproj');
    const other = await ownerWithProject('dproj2');
    expectDetail(await postDashboard(owner.token, { project_id: UNKNOWN_ID, name: 'x' }), 404, 'project not found');
    expectDetail(await postDashboard(owner.token, { project_id: other.project.id, name: 'x' }), 403);
  });

  it('holds at most 100 dashboards per project (409 beyond)', async () => {
    const { owner, project } = await ownerWithProject('dlimit');
    // 1 default + 98 here = 99; the API adds the 100th and refuses the 101st.
    await h().ctx.pg.pool.query(
      `INSERT INTO dashboards (id, project_id, name) SELECT gen_random_uuid(), $1, 'filler ' || g FROM generate_series(1, 98) g`,
      [project.id],
    );
    expect((await postDashboard(owner.token, { project_id: project.id, name: 'hundredth' })).statusCode).toBe(201);
    const refused = await postDashboard(owner.token, { project_id: project.id, name: 'one too many' });
    expectDetail(refused, 409);
    expect(refused.json().detail).toMatch(/at most 100 dashboards/);
  });
});

describe('widget writes', () => {
  it('creates (201), reads, edits (200) and deletes (200) a widget', async () => {
    const { owner, project } = await ownerWithProject('wwrite');
    const dashboard = await createdDashboard(owner.token, project.id);
    const created = await postWidget(owner.token, {
      project_id: project.id,
      dashboard_id: dashboard.id,
      title: 'Spend',
      type: 'timeseries',
      spec: VALID_SPEC,
    });
    expect(created.statusCode).toBe(201);
    const widget = created.json();
    expect(widget).toEqual({
      id: expect.any(String),
      dashboard_id: dashboard.id,
      title: 'Spend',
      type: 'timeseries',
      spec: VALID_SPEC,
      create_time: expect.stringMatching(ISO),
      update_time: widget.create_time,
    });
    const read = await getWidget(owner.token, widget.id, { project_id: project.id });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(widget);

    const retitled = await patchWidget(owner.token, widget.id, { project_id: project.id, title: 'Spend by model' });
    expect(retitled.statusCode).toBe(200);
    expect(retitled.json()).toEqual({ ...widget, title: 'Spend by model', update_time: expect.stringMatching(ISO) });
    expect(Date.parse(retitled.json().update_time)).toBeGreaterThan(Date.parse(widget.update_time));

    const newSpec = { view: 'TRACES', measure: 'latency', aggregation: 'p95' };
    const respecced = await patchWidget(owner.token, widget.id, {
      project_id: project.id,
      type: 'stat',
      spec: newSpec,
    });
    expect(respecced.json()).toMatchObject({ title: 'Spend by model', type: 'stat', spec: newSpec });

    const deleted = await deleteWidget(owner.token, widget.id, { project_id: project.id });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ deleted: true, id: widget.id });
    expectDetail(await getWidget(owner.token, widget.id, { project_id: project.id }), 404, 'widget not found');
    expectDetail(await deleteWidget(owner.token, widget.id, { project_id: project.id }), 404, 'widget not found');
    expect((await getDashboard(owner.token, dashboard.id, { project_id: project.id })).json().widgets).toEqual([]);
  });

  it('refuses an invalid query-widget spec with 422 located under body.spec', async () => {
    const { owner, project } = await ownerWithProject('wspec');
    const dashboard = await createdDashboard(owner.token, project.id);
    const post = (type: string, spec: unknown) =>
      postWidget(owner.token, { project_id: project.id, dashboard_id: dashboard.id, title: 'w', type, spec });
    expectValidationAt(await post('timeseries', { ...VALID_SPEC, view: 'LOGS' }), ['body', 'spec', 'view']);
    expectValidationAt(await post('stat', { view: 'SPANS', measure: 'span_count', aggregation: 'sum' }), [
      'body',
      'spec',
      'measure',
    ]);
    expectValidationAt(await post('table', { ...VALID_SPEC, limit: 0 }), ['body', 'spec', 'limit']);
    expectValidationAt(await post('bar', { ...VALID_SPEC, group_by: ['nope'] }), ['body', 'spec', 'group_by', 0]);
    expectValidationAt(await post('bar', 'not an object'), ['body', 'spec']);
    expectValidationAt(await post('stat', undefined), ['body', 'spec']);
    expectValidationAt(await post('pie', VALID_SPEC), ['body', 'type']);
    expectValidationAt(await post('stat', { ...VALID_SPEC, extra: 1 }), ['body', 'spec']);
    expectValidationAt(
      await postWidget(owner.token, {
        project_id: project.id,
        dashboard_id: dashboard.id,
        title: '',
        type: 'stat',
        spec: VALID_SPEC,
      }),
      ['body', 'title'],
    );
    const entry = expectValidationAt(await post('timeseries', { ...VALID_SPEC, view: 'LOGS' }), [
      'body',
      'spec',
      'view',
    ]);
    expect(entry).toMatchObject({ type: 'enum', input: 'LOGS' });
    expect((await getDashboard(owner.token, dashboard.id, { project_id: project.id })).json().widgets).toEqual([]);
  });

  it('accepts any JSON as a markdown spec', async () => {
    const { owner, project } = await ownerWithProject('wmd');
    const dashboard = await createdDashboard(owner.token, project.id);
    for (const spec of [
      '# Notes',
      42,
      null,
      [1, 'two', { three: 3 }],
      { text: 'hello', nested: { deep: [true] } },
      { view: 'LOGS' },
    ]) {
      const widget = await createdWidget(owner.token, project.id, dashboard.id, 'notes', 'markdown', spec);
      expect(widget.spec).toEqual(spec);
      expect((await getWidget(owner.token, widget.id, { project_id: project.id })).json().spec).toEqual(spec);
    }
  });

  it('re-validates the resulting spec against the resulting type on edit', async () => {
    const { owner, project } = await ownerWithProject('wedit');
    const dashboard = await createdDashboard(owner.token, project.id);
    const notes = await createdWidget(owner.token, project.id, dashboard.id, 'notes', 'markdown', { text: 'hello' });
    // Turning markdown into a query widget keeps its spec, which is not a valid query spec.
    expectValidationAt(await patchWidget(owner.token, notes.id, { project_id: project.id, type: 'stat' }), [
      'body',
      'spec',
    ]);
    const turned = await patchWidget(owner.token, notes.id, { project_id: project.id, type: 'stat', spec: VALID_SPEC });
    expect(turned.statusCode).toBe(200);
    expect(turned.json()).toMatchObject({ type: 'stat', spec: VALID_SPEC });
    // A new spec alone is checked against the stored type.
    expectValidationAt(
      await patchWidget(owner.token, notes.id, {
        project_id: project.id,
        spec: { ...VALID_SPEC, aggregation: 'median' },
      }),
      ['body', 'spec', 'aggregation'],
    );
    const back = await patchWidget(owner.token, notes.id, {
      project_id: project.id,
      type: 'markdown',
      spec: 'plain text',
    });
    expect(back.json()).toMatchObject({ type: 'markdown', spec: 'plain text', title: 'notes' });
    expectValidationAt(await patchWidget(owner.token, notes.id, { project_id: project.id, title: '' }), [
      'body',
      'title',
    ]);
    expectValidationAt(await patchWidget(owner.token, notes.id, { project_id: project.id, type: 'pie' }), [
      'body',
      'type',
    ]);
    expect((await getWidget(owner.token, notes.id, { project_id: project.id })).json()).toMatchObject({
      type: 'markdown',
      spec: 'plain text',
    });
  });

  it('answers 404 for an unknown dashboard on create and an unknown widget on edit or delete', async () => {
    const { owner, project } = await ownerWithProject('w404');
    const q = { project_id: project.id };
    expectDetail(
      await postWidget(owner.token, { ...q, dashboard_id: UNKNOWN_ID, title: 't', type: 'markdown', spec: {} }),
      404,
      'dashboard not found',
    );
    expectDetail(
      await postWidget(owner.token, { ...q, dashboard_id: 'nope', title: 't', type: 'markdown', spec: {} }),
      404,
      'dashboard not found',
    );
    expectDetail(await patchWidget(owner.token, UNKNOWN_ID, { ...q, title: 't' }), 404, 'widget not found');
    expectDetail(await deleteWidget(owner.token, 'nope', q), 404, 'widget not found');
  });

  it('holds at most 50 widgets per dashboard (409 beyond)', async () => {
    const { owner, project } = await ownerWithProject('wlimit');
    const dashboard = await createdDashboard(owner.token, project.id);
    await h().ctx.pg.pool.query(
      `INSERT INTO widgets (id, dashboard_id, project_id, title, type, spec) SELECT gen_random_uuid(), $1, $2, 'filler ' || g, 'markdown', '{}' FROM generate_series(1, 49) g`,
      [dashboard.id, project.id],
    );
    await createdWidget(owner.token, project.id, dashboard.id, 'fiftieth');
    const refused = await postWidget(owner.token, {
      project_id: project.id,
      dashboard_id: dashboard.id,
      title: 'one too many',
      type: 'markdown',
      spec: {},
    });
    expectDetail(refused, 409);
    expect(refused.json().detail).toMatch(/at most 50 widgets/);
  });
});

describe('who may write', () => {
  it('refuses every write made with an API key: 403 with the exact detail', async () => {
    const { owner, project, key } = await projectWithKey(h(), 'keywrite');
    const dashboard = await createdDashboard(owner.token, project.id);
    const widget = await createdWidget(owner.token, project.id, dashboard.id);
    const q = { project_id: project.id };
    const refusals = [
      await postDashboard(key.key, { ...q, name: 'x' }),
      await patchDashboard(key.key, dashboard.id, { ...q, name: 'x' }),
      await deleteDashboard(key.key, dashboard.id, q),
      await postWidget(key.key, { ...q, dashboard_id: dashboard.id, title: 'x', type: 'markdown', spec: {} }),
      await patchWidget(key.key, widget.id, { ...q, title: 'x' }),
      await deleteWidget(key.key, widget.id, q),
    ];
    for (const res of refusals) expectDetail(res, 403, USER_LOGIN_REQUIRED_DETAIL);
    const after = (await getDashboard(owner.token, dashboard.id, q)).json();
    expect(after).toMatchObject({ name: dashboard.name, widgets: [{ id: widget.id, title: widget.title }] });
  });

  it('refuses a VIEWER (403) and lets a MEMBER write', async () => {
    const { owner, project } = await ownerWithProject('roles');
    const dashboard = await createdDashboard(owner.token, project.id);
    const widget = await createdWidget(owner.token, project.id, dashboard.id);
    const viewer = await memberWithRole(h(), owner, owner.workspace.id, 'VIEWER');
    const member = await memberWithRole(h(), owner, owner.workspace.id, 'MEMBER');
    const q = { project_id: project.id };
    const refusals = [
      await postDashboard(viewer.token, { ...q, name: 'x' }),
      await patchDashboard(viewer.token, dashboard.id, { ...q, name: 'x' }),
      await deleteDashboard(viewer.token, dashboard.id, q),
      await postWidget(viewer.token, { ...q, dashboard_id: dashboard.id, title: 'x', type: 'markdown', spec: {} }),
      await patchWidget(viewer.token, widget.id, { ...q, title: 'x' }),
      await deleteWidget(viewer.token, widget.id, q),
    ];
    for (const res of refusals)
      expectDetail(res, 403, 'this operation requires the MEMBER role or higher in the workspace');
    const mine = await createdDashboard(member.token, project.id, 'member board');
    expect(mine.creator).toBe(member.user.name);
    await createdWidget(member.token, project.id, mine.id);
    expect((await patchWidget(member.token, widget.id, { ...q, title: 'member edit' })).statusCode).toBe(200);
    expect((await deleteDashboard(member.token, dashboard.id, q)).statusCode).toBe(200);
  });

  it('refuses a user who is not in the workspace with 403', async () => {
    const { owner, project } = await ownerWithProject('outsider');
    const dashboard = await createdDashboard(owner.token, project.id);
    const stranger = await signUp(h(), 'stranger');
    expectDetail(await postDashboard(stranger.token, { project_id: project.id, name: 'x' }), 403);
    expectDetail(await deleteDashboard(stranger.token, dashboard.id, { project_id: project.id }), 403);
  });
});

describe('api keys of a second project', () => {
  it("see only their own project's dashboards", async () => {
    const a = await projectWithKey(h(), 'keya');
    const b = await projectWithKey(h(), 'keyb');
    const mine = await createdDashboard(a.owner.token, a.project.id, 'only a');
    const listB = (await listDashboards(b.key.key)).json().data as { name: string }[];
    expect(listB.map((d) => d.name)).toEqual(['Overview']);
    expectDetail(await getDashboard(b.key.key, mine.id), 404, 'dashboard not found');
    const keyA2 = await createApiKey(h(), a.owner.token, a.project.id);
    expect((await listDashboards(keyA2.key)).json().data.map((d: { name: string }) => d.name)).toEqual([
      'Overview',
      'only a',
    ]);
  });
});
