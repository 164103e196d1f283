import { describe, expect, it } from 'vitest';
import { call, createProject, PUBLIC, signUp, useHarness } from '../support/harness.js';
import { expectValidationAt } from '../support/expect.js';

// EXPORT_ALLOW_PRIVATE unset: bucket endpoints follow the webhook address rules.
const h = useHarness();

describe('export bucket addresses', () => {
  it('refuses an endpoint on a loopback or private address without EXPORT_ALLOW_PRIVATE', async () => {
    const owner = await signUp(h(), 'private');
    const projectId = (await createProject(h(), owner.token, owner.workspace.id)).id;
    for (const endpoint of ['http://127.0.0.1:9000', 'http://localhost:9000', 'http://10.1.2.3', 'http://[::1]:9000']) {
      const res = await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/export-buckets`,
        token: owner.token,
        payload: {
          project_id: projectId,
          name: 'inside',
          endpoint,
          region: 'us-east-1',
          bucket: 'exports',
          access_key_id: 'id',
          secret_access_key: 'secret',
        },
      });
      expectValidationAt(res, ['body', 'endpoint']);
      expect(res.json().detail[0].msg).toBe(
        'endpoint points at a loopback or private address; set EXPORT_ALLOW_PRIVATE=true to allow it',
      );
    }
  });
});
