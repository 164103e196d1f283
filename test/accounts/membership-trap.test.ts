import { describe, expect, it } from 'vitest';
import { call, createProject, PUBLIC, signUp, useHarness, type SignedUp } from '../support/harness.js';
import { MAX_WORKSPACES_PER_USER } from '../../src/workspaces/service.js';

/**
 * Issue 20, finding 4: `POST /workspaces/{attacker_ws}/members {email: victim}` ×99 added the victim
 * without consent; they couldn't leave (403), then couldn't create a workspace or be added to a real
 * one (409 "at most 100 workspaces"), and a workspace named "AAA…" became their landing project.
 */
const h = useHarness();

const api = (token: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
  call(h().api, { method, url: `${PUBLIC}${url}`, token, payload: payload as object });

async function addMember(admin: SignedUp, workspaceId: string, email: string) {
  return api(admin.token, 'POST', `/workspaces/${workspaceId}/members`, { email, role: 'VIEWER' });
}

describe('membership nobody can be trapped in', () => {
  it('99 unwanted memberships: the victim still creates, leaves any of them, and is added to a real team after leaving', async () => {
    const attacker = await signUp(h(), 'attacker');
    const victim = await signUp(h(), 'victim');
    const team = await signUp(h(), 'team');
    const attackerSpaces: string[] = [];
    for (let i = 0; i < MAX_WORKSPACES_PER_USER - 1; i++) {
      const ws = await api(attacker.token, 'POST', '/workspaces', { name: `AAA ${String(i).padStart(2, '0')}` });
      expect(ws.statusCode, ws.body).toBe(201);
      attackerSpaces.push(ws.json().id);
      const added = await addMember(attacker, ws.json().id, victim.user.email);
      // The answer of an add is as it always was.
      expect(added.statusCode, added.body).toBe(201);
      expect(added.json()).toEqual({
        user_id: victim.user.id,
        email: victim.user.email,
        name: victim.user.name,
        role: 'VIEWER',
      });
    }
    // The victim now belongs to 100 workspaces: nobody can add them to one more (a clear 409)…
    const refused = await addMember(team, team.workspace.id, victim.user.email);
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json().detail).toBe(
      `this user already belongs to ${MAX_WORKSPACES_PER_USER} workspaces, at most; they can leave one before being added to another`,
    );
    // …but the victim's own creation counts only what they created.
    const own = await api(victim.token, 'POST', '/workspaces', { name: 'mine too' });
    expect(own.statusCode, own.body).toBe(201);

    // Leaving: any member removes themselves, with the same answer as a removal.
    for (const id of attackerSpaces.slice(0, 2)) {
      const left = await api(victim.token, 'DELETE', `/workspaces/${id}/members/${victim.user.id}`);
      expect(left.statusCode, left.body).toBe(200);
      expect(left.json()).toEqual({ deleted: true, workspace_id: id, user_id: victim.user.id });
    }
    expect((await api(victim.token, 'GET', `/workspaces/${attackerSpaces[0]}/members`)).statusCode).toBe(403);
    // A VIEWER still can't remove anyone else.
    expect(
      (await api(victim.token, 'DELETE', `/workspaces/${attackerSpaces[2]}/members/${attacker.user.id}`)).statusCode,
    ).toBe(403);
    // Below the bound again, the real team adds them.
    const joined = await addMember(team, team.workspace.id, victim.user.email);
    expect(joined.statusCode, joined.body).toBe(201);
  });

  it('the last ADMIN cannot leave (409); another ADMIN first, then they can', async () => {
    const owner = await signUp(h(), 'owner');
    const colleague = await signUp(h(), 'colleague');
    const last = await api(owner.token, 'DELETE', `/workspaces/${owner.workspace.id}/members/${owner.user.id}`);
    expect(last.statusCode, last.body).toBe(409);
    expect(last.json().detail).toBe('the last ADMIN of a workspace cannot leave it; make another member ADMIN first');
    await addMember(owner, owner.workspace.id, colleague.user.email);
    const promoted = await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/workspaces/${owner.workspace.id}/members/${colleague.user.id}`,
      token: owner.token,
      payload: { role: 'ADMIN' },
    });
    expect(promoted.statusCode).toBe(200);
    const left = await api(owner.token, 'DELETE', `/workspaces/${owner.workspace.id}/members/${owner.user.id}`);
    expect(left.statusCode, left.body).toBe(200);
    expect((await api(owner.token, 'GET', '/workspaces')).json().data.map((w: { id: string }) => w.id)).not.toContain(
      owner.workspace.id,
    );
  });

  it('the landing project is the one last created or read, never the one whose workspace name sorts first', async () => {
    const victim = await signUp(h(), 'landing');
    const attacker = await signUp(h(), 'aaa');
    const mine = await createProject(h(), victim.token, victim.workspace.id, 'zzz my project');
    const ws = await api(attacker.token, 'POST', '/workspaces', { name: 'AAAA first by name' });
    const bait = await createProject(h(), attacker.token, ws.json().id, 'AAAA bait');
    expect((await addMember(attacker, ws.json().id, victim.user.email)).statusCode).toBe(201);

    const first = async () => (await api(victim.token, 'GET', '/projects')).json().data[0].id as string;
    expect(await first()).toBe(mine.id);
    // Reading a project makes it the landing one; reading another moves it on.
    expect(
      (
        await call(h().api, {
          method: 'GET',
          url: `${PUBLIC}/datasets`,
          token: victim.token,
          query: { project_id: bait.id },
        })
      ).statusCode,
    ).toBe(200);
    expect(await first()).toBe(bait.id);
    expect(
      (
        await call(h().api, {
          method: 'GET',
          url: `${PUBLIC}/datasets`,
          token: victim.token,
          query: { project_id: mine.id },
        })
      ).statusCode,
    ).toBe(200);
    expect(await first()).toBe(mine.id);
    // A project the victim creates is where they land.
    const second = await createProject(h(), victim.token, victim.workspace.id, 'b second');
    const list = (await api(victim.token, 'GET', '/projects')).json().data as { id: string; workspace_id: string }[];
    expect(list[0]!.id).toBe(second.id);
    // Each workspace's projects stay together.
    expect(list.map((p) => p.workspace_id)).toEqual([victim.workspace.id, victim.workspace.id, ws.json().id]);
  });
});
