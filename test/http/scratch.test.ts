import { it } from 'vitest';
import { call, signUp, PUBLIC, useHarness } from '../support/harness.js';
const h = useHarness();
it('scratch', async () => {
  const u = await signUp(h());
  for (const [method, url] of [['DELETE', `${PUBLIC}/projects/`], ['DELETE', `${PUBLIC}/projects/%20`], ['PATCH', `${PUBLIC}/workspaces/${u.workspace.id}/members/`], ['DELETE', `${PUBLIC}/workspaces/${u.workspace.id}/members/`], ['GET', `${PUBLIC}/workspaces//members`], ['DELETE', `${PUBLIC}/workspaces/?name=x&reason=abc`], ['GET', `${PUBLIC}/nope`], ['POST', `${PUBLIC}/projects`]] as const) {
    const r = await call(h().api, { method, url, token: u.token, payload: method === 'PATCH' ? { role: 'ADMIN' } : undefined });
    console.log(method, url, r.statusCode, r.body);
  }
  const r = await call(h().api, { method: 'POST', url: `${PUBLIC}/projects`, token: u.token, headers: { 'content-type': 'application/json' }, payload: '{oops' });
  console.log(r.statusCode, r.body);
  const r2 = await call(h().api, { method: 'GET', url: `/readyz` });
  console.log(r2.statusCode, r2.body);
});
