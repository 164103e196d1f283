import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Langfuse } from 'langfuse';
import { Client } from 'langsmith';
import { traceable, getCurrentRunTree } from 'langsmith/traceable';
import { call, PUBLIC } from '../support/harness.js';
import { logIn, newPage, screenshot, useWebServer, type WebServer } from '../support/browser.js';
import { listenOnLoopback } from '../integrations/support/read-back.js';
import { settleSpanParts } from '../../src/protocols/span-parts.js';
import { LANGSMITH_PREFIX } from '../../src/protocols/langsmith/routes.js';

/**
 * Issue 32's "in the web app": a trace sent by the real Langfuse SDK v3 (`/api/public/ingestion`) and
 * one by the real LangSmith SDK (`/runs/multipart`), opened in the trace view as their users would:
 * each span's kind, the LLM span's model, cost, input and output, and the SDK's score (Langfuse
 * `score()`, LangSmith feedback) in the trace's scores.
 */

const server = useWebServer();
type Span = { span_id: string; kind: string; model_name: string | null; cost: number; input: string | null };
type Trace = { total_cost: number; spans: Span[] };

async function langfuseTrace(origin: string, key: string): Promise<string> {
  const langfuse = new Langfuse({ publicKey: 'pk-lf-web', secretKey: key, baseUrl: origin, flushAt: 1000 });
  const traceId = crypto.randomUUID();
  const t = langfuse.trace({ id: traceId, name: 'lf-support', userId: 'user-lf', input: { question: 'bag?' } });
  const lookup = t.span({ name: 'lookup', input: { bag: 7 } });
  lookup.end({ output: { found: true } });
  const generation = t.generation({
    name: 'lf-chat',
    model: 'gpt-4o',
    input: [{ role: 'user', content: 'where is my bag?' }],
  });
  generation.end({
    output: { role: 'assistant', content: 'In Lisbon.' },
    usage: { input: 120, output: 30 },
    costDetails: { input: 0.0012, output: 0.0006 },
  });
  t.update({ output: { answer: 'In Lisbon.' } });
  langfuse.score({ traceId, name: 'lf-helpfulness', value: 0.9 });
  await langfuse.shutdownAsync();
  return traceId;
}

async function langsmithTrace(origin: string, key: string): Promise<string> {
  const ls = new Client({ apiUrl: `${origin}${LANGSMITH_PREFIX}`, apiKey: key });
  let rootId = '';
  const chat = traceable(
    async (messages: { role: string; content: string }[]) => ({
      choices: [{ message: { role: 'assistant', content: `sunny, for ${messages[0]!.content}` } }],
      usage_metadata: { input_tokens: 40, output_tokens: 10, total_tokens: 50 },
    }),
    {
      name: 'ls-chat',
      run_type: 'llm',
      client: ls,
      tracingEnabled: true,
      metadata: { ls_model_name: 'gpt-4o', ls_provider: 'openai' },
    },
  );
  const tool = traceable(async (city: string) => `sunny in ${city}`, {
    name: 'ls-weather',
    run_type: 'tool',
    client: ls,
    tracingEnabled: true,
  });
  const agent = traceable(
    async (question: string) => {
      rootId = getCurrentRunTree().id;
      await chat([{ role: 'user', content: question }]);
      return tool('Paris');
    },
    { name: 'ls-agent', run_type: 'chain', client: ls, tracingEnabled: true },
  );
  await agent('What is the weather in Paris?');
  await ls.awaitPendingTraceBatches();
  await ls.createFeedback(rootId, 'ls-correct', { score: 1, traceId: rootId });
  await ls.awaitPendingTraceBatches();
  return rootId;
}

async function readTrace(s: WebServer, traceId: string): Promise<Trace> {
  const res = await call(s.h.api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token: s.demo.apiKey });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Trace;
}

describe('web application: traces from the Langfuse and LangSmith protocols', () => {
  it.each([
    ['langfuse', langfuseTrace, 'lf-chat', 'lf-helpfulness'],
    ['langsmith', langsmithTrace, 'ls-chat', 'ls-correct'],
  ] as const)(
    '%s: kinds, model, cost, input, output and the score show in the trace view',
    async (name, send, llmName, scoreName) => {
      const s = server();
      const origin = s.h.api.server.listening
        ? `http://127.0.0.1:${(s.h.api.server.address() as { port: number }).port}`
        : await listenOnLoopback(s.h);
      const traceId = await send(origin, s.demo.apiKey);
      await settleSpanParts(s.h.ctx, { now: Date.now() + 60_000, projectId: s.demo.projectId });
      const trace = await readTrace(s, traceId);
      const llm = trace.spans.find((x) => x.kind === 'llm')!;
      expect(llm).toMatchObject({ model_name: 'gpt-4o' });
      expect(llm.cost).toBeGreaterThan(0);

      const { page } = await newPage(s);
      await logIn(page, s.demo.email, s.demo.password);
      await page.goto(
        `/projects/${s.demo.projectId}/traces/${encodeURIComponent(traceId)}?span=${encodeURIComponent(llm.span_id)}`,
      );
      await page.getByTestId('waterfall').waitFor();
      const rows = page.locator('[role="treeitem"]');
      await expect.poll(() => rows.count()).toBe(trace.spans.length);
      for (const span of trace.spans) {
        await expect(
          page.locator(`[role="treeitem"][data-span-id="${span.span_id}"] .kind`).textContent(),
        ).resolves.toBe(span.kind);
      }
      const summary = page.getByTestId('trace-summary');
      await expect(summary.textContent()).resolves.toMatch(/Cost\s*\$0\.0*[1-9]/);
      await expect(summary.textContent()).resolves.toContain('gpt-4o');

      const panel = page.getByTestId('span-panel');
      await expect(panel.textContent()).resolves.toContain(llmName);
      await expect(panel.getByRole('heading', { level: 3, name: 'Input' }).isVisible()).resolves.toBe(true);
      await expect(panel.getByRole('heading', { level: 3, name: 'Output' }).isVisible()).resolves.toBe(true);

      await page.getByTestId('trace-scores').waitFor();
      const score = page.getByTestId('trace-scores').getByTestId('score-row').filter({ hasText: scoreName });
      await expect.poll(() => score.count()).toBe(1);
      await screenshot(page, `protocol-${name}`);
    },
    120_000,
  );
});
