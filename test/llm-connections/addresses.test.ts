import { describe, expect, it } from 'vitest';
import { call, createProject, PUBLIC, signUp, useHarness } from '../support/harness.js';
import { expectValidationAt } from '../support/expect.js';
import { exchange } from '../../src/outbound/exchange.js';

/** base_url follows the webhook address rules (src/outbound/addresses.ts) unless LLM_CONNECTION_ALLOW_PRIVATE. */
const h = useHarness({ LLM_CONNECTION_ALLOW_PRIVATE: 'false' });

describe('LLM connection addresses', () => {
  it('refuses loopback and private base URLs at create and edit', async () => {
    const owner = await signUp(h(), 'addr');
    const project = await createProject(h(), owner.token, owner.workspace.id);
    for (const url of [
      'http://127.0.0.1:8080/v1',
      'http://localhost/v1',
      'http://[::ffff:10.0.0.1]/v1',
      'http://169.254.169.254/',
    ]) {
      const res = await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/llm-connections`,
        token: owner.token,
        payload: {
          project_id: project.id,
          name: 'x',
          provider: 'openai_compatible',
          base_url: url,
          api_key: 'k-123456789',
        },
      });
      expectValidationAt(res, ['body', 'base_url']);
      expect(res.json().detail[0].msg).toContain('LLM_CONNECTION_ALLOW_PRIVATE=true');
    }
    const made = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/llm-connections`,
      token: owner.token,
      payload: { project_id: project.id, name: 'ok', provider: 'openai', api_key: 'sk-123456789' },
    });
    expect(made.statusCode, made.body).toBe(201);
    const edit = await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/llm-connections/${made.json().id}`,
      token: owner.token,
      payload: { project_id: project.id, base_url: 'http://10.1.2.3/v1' },
    });
    expectValidationAt(edit, ['body', 'base_url']);
  });

  it('a localhost name is refused before any lookup, in a fixed sentence', async () => {
    const result = await exchange({
      url: 'http://localhost.localdomain.invalid.localhost/v1',
      method: 'POST',
      body: '{}',
      headers: {},
      timeoutMs: 2000,
      allowPrivate: false,
      target: 'the LLM provider host',
      maxAnswerBytes: 1000,
    });
    expect(result).toMatchObject({
      ok: false,
      retry: false,
      error: 'the LLM provider host is a loopback or private address',
    });
  });
});
