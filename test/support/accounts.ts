import { expect } from 'vitest';
import { call, PUBLIC, signUp, type Harness, type SignedUp } from './harness.js';

/** A new user added to the admin's workspace with `role`. */
export async function memberWithRole(
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
  expect(res.statusCode, res.body).toBe(201);
  return user;
}
