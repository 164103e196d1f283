import { afterAll, describe, expect, it } from 'vitest';
import { projectWithKey, useHarness } from '../support/harness.js';
import { runTraceloop } from './scenarios/traceloop.js';
import { startFakeOpenAi, type FakeOpenAi } from './support/fake-openai.js';
import {
  listenOnLoopback,
  runOnce,
  spanNamed,
  spansNamed,
  waitForTrace,
  type StoredTrace,
  expectModelCallsPriced,
  expectScenarioWords,
  expectTenantFilterFinds,
} from './support/read-back.js';
import { AGENT_NAME, FAILURE_MESSAGE, SESSION_ID, TENANT, TOOL_NAME, USER_ID } from './support/scenario.js';

/**
 * OpenLLMetry (@traceloop/node-server-sdk with its `openai` instrumentation against a fake provider on
 * loopback; workflow, agent, tool and task wrappers; association properties) exporting OTLP protobuf
 * into a running Sightline, read back as its user expects (docs/integrations/traceloop.md).
 */

const h = useHarness();
let fake: FakeOpenAi;
let token: string;
let trace: StoredTrace;
const CHAT = 'chat gpt-4o';

runOnce(async () => {
  const origin = await listenOnLoopback(h());
  fake = await startFakeOpenAi();
  token = (await projectWithKey(h())).key.key;
  const { traceId } = await runTraceloop({ origin, apiKey: token, openaiBaseUrl: fake.baseUrl });
  expect(fake.requests).toHaveLength(3);
  trace = await waitForTrace(h(), token, traceId, 6);
});
afterAll(async () => fake?.close());

describe('OpenLLMetry (Traceloop) into Sightline', () => {
  it('gives workflow, agent, task, tool and chat spans their kinds', () => {
    expect(spanNamed(trace, 'plan_trip.workflow').kind).toBeOneOf(['chain', 'agent']);
    expect(spanNamed(trace, `${AGENT_NAME}.agent`).kind).toBe('agent');
    expect(spanNamed(trace, 'translate.task').kind).toBe('chain');
    expect(spanNamed(trace, `${TOOL_NAME}.tool`).kind).toBe('tool');
    expect(spansNamed(trace, CHAT).map((s) => s.kind)).toEqual(['llm', 'llm']);
  });

  it('reads model, tokens and a cost from the price table on the chat spans', () => {
    for (const chat of spansNamed(trace, CHAT)) expect(chat.model_name).toMatch(/^gpt-4o/);
    expectModelCallsPriced(trace, spansNamed(trace, CHAT));
  });

  it('shows traceloop.entity.input/output on the trace and the tool, and the messages on the chat spans', () => {
    expectScenarioWords(trace, spansNamed(trace, CHAT), spanNamed(trace, `${TOOL_NAME}.tool`));
  });

  it('puts the userId and sessionId association properties on the trace', () => {
    expect(trace).toMatchObject({ user_id: USER_ID, session_id: SESSION_ID });
  });

  it('marks the failed task as an error with its message', () => {
    const task = spanNamed(trace, 'translate.task');
    expect(task.status).toBe('error');
    expect(task.error_message ?? '(null)').toContain(FAILURE_MESSAGE);
    expect(trace.error_count).toBe(1);
  });

  it('lifts the tenant association property to plain metadata that `metadata eq` finds', async () => {
    expect(spanNamed(trace, 'plan_trip.workflow').metadata).toMatchObject({ tenant: TENANT });
    expect(trace.metadata_map).toEqual({ tenant: TENANT });
    await expectTenantFilterFinds(h(), token, trace);
  });
});
