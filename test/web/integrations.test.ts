import { describe, expect, it } from 'vitest';
import { call, PUBLIC } from '../support/harness.js';
import { logIn, newPage, screenshot, useWebServer } from '../support/browser.js';
import { loadOtlpFixture, OTLP_FIXTURES } from '../support/otlp-fixtures.js';

/**
 * Issue 19's "in the web app": each real library's recorded export (test/fixtures/otlp/), sent over
 * OTLP, opened in the trace view as its user would: every span with the kind the API gives it, the
 * trace's model, cost, user and session in the summary, the LLM span's model, cost source and input,
 * and the list finding the trace by its plain `tenant` metadata key.
 */

const server = useWebServer();
type Span = {
  span_id: string;
  kind: string;
  model_name: string | null;
  cost: number;
  cost_source: string;
  input: string | null;
};

describe('web application: traces from the real instrumentation libraries', () => {
  it.each(OTLP_FIXTURES)(
    '%s: kinds, model, cost, user, session, input and metadata show in the trace view',
    async (file) => {
      const s = server();
      const { body, traceIds } = loadOtlpFixture(file);
      const traceId = traceIds[0]!;
      const sent = await call(s.h.api, {
        method: 'POST',
        url: `${PUBLIC}/otel/v1/traces`,
        token: s.demo.apiKey,
        payload: body,
        headers: { 'content-type': 'application/json' },
      });
      expect(sent.statusCode, sent.body).toBe(200);
      const trace = (
        await call(s.h.api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token: s.demo.apiKey })
      ).json() as {
        user_id: string;
        session_id: string;
        total_cost: number;
        spans: Span[];
      };
      const llm = trace.spans.find((x) => x.kind === 'llm' && x.cost > 0 && x.input)!;
      expect(llm, 'an LLM span with a cost and an input').toBeDefined();

      const { context, page } = await newPage(s);
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
      await expect(summary.textContent()).resolves.toContain(trace.user_id);
      await expect(summary.textContent()).resolves.toMatch(/Cost\s*\$0\.0*[1-9]/);
      await expect(summary.textContent()).resolves.toContain(llm.model_name!);
      await expect(
        page.getByRole('link', { name: new RegExp(`^Session ${trace.session_id.slice(0, 24)}`) }).isVisible(),
      ).resolves.toBe(true);

      const panel = page.getByTestId('span-panel');
      await expect(panel.textContent()).resolves.toContain(llm.model_name!);
      await expect(panel.getByTestId('span-cost').textContent()).resolves.toMatch(
        llm.cost_source === 'sent' ? /sent by the producer/ : /price table/,
      );
      await expect(panel.getByRole('heading', { level: 3, name: 'Input' }).isVisible()).resolves.toBe(true);
      await screenshot(page, `integration-${file.replace('.json', '')}`);

      // The list finds it by the plain metadata key the library sent as its own kind of metadata.
      const filters = JSON.stringify([
        { field: 'metadata', key: 'tenant', op: 'eq', value: 'acme' },
        { field: 'trace_id', op: 'eq', value: traceId },
      ]);
      await page.goto(`/projects/${s.demo.projectId}/traces?filters=${encodeURIComponent(filters)}`);
      await expect.poll(() => page.getByTestId('trace-row').count()).toBe(1);
      await context.close();
    },
  );
});
