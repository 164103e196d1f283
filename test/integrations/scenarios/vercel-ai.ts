import type { Tracer } from '@opentelemetry/api';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { otlpJsonProvider, useAsyncContext } from '../support/otel.js';
import {
  AGENT_NAME,
  ANSWER,
  FAILING_TOOL_ARGS,
  FAILING_TOOL_MESSAGE,
  FAILING_TOOL_NAME,
  MODEL,
  QUESTION,
  SESSION_ID,
  TENANT,
  TOOL_ARGS,
  TOOL_CALL_ID,
  TOOL_NAME,
  TOOL_RESULT,
  USAGE,
  USER_ID,
  type ScenarioResult,
  type Target,
} from '../support/scenario.js';

/**
 * The scenario through the Vercel AI SDK's `experimental_telemetry`: one generateText with tools and
 * a mock gpt-4o (ai/test). Step 1 calls get_weather and book_table (which throws), step 2 answers.
 * User, session and tenant go in `metadata`, as the SDK's docs show.
 */

const usage = {
  inputTokens: {
    total: USAGE.input,
    noCache: USAGE.input - USAGE.cachedInput,
    cacheRead: USAGE.cachedInput,
    cacheWrite: undefined,
  },
  outputTokens: { total: USAGE.output, text: USAGE.output, reasoning: undefined },
};
const response = (id: string) => ({ id, modelId: 'gpt-4o-2024-08-06', timestamp: new Date() });

export async function runVercelAi(target: Target): Promise<ScenarioResult> {
  useAsyncContext();
  const { provider, exporter } = otlpJsonProvider(target);
  await generateTravelAnswer(provider.getTracer('ai'));
  await provider.forceFlush();
  await provider.shutdown();
  exporter.assertExported();
  return { traceId: exporter.traceIds()[0]! };
}

/**
 * The scenario's one generateText, its spans on `tracer` (also played by the langfuse-vercel scenario,
 * whose exporter is Langfuse's).
 */
export async function generateTravelAnswer(tracer: Tracer): Promise<void> {
  const model = new MockLanguageModelV3({
    provider: 'openai.chat',
    modelId: MODEL,
    doGenerate: [
      {
        content: [
          { type: 'tool-call', toolCallId: TOOL_CALL_ID, toolName: TOOL_NAME, input: JSON.stringify(TOOL_ARGS) },
          {
            type: 'tool-call',
            toolCallId: 'call_book_1',
            toolName: FAILING_TOOL_NAME,
            input: JSON.stringify(FAILING_TOOL_ARGS),
          },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        response: response('chatcmpl-step1'),
        warnings: [],
      },
      {
        content: [{ type: 'text', text: ANSWER }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        response: response('chatcmpl-step2'),
        warnings: [],
      },
    ],
  });

  const result = await generateText({
    model,
    system: 'You are a travel agent.',
    prompt: QUESTION,
    stopWhen: stepCountIs(3),
    tools: {
      [TOOL_NAME]: tool({
        description: 'Current weather in a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async () => TOOL_RESULT,
      }),
      [FAILING_TOOL_NAME]: tool({
        description: 'Book a restaurant table',
        inputSchema: z.object({ restaurant: z.string(), time: z.string() }),
        execute: async (): Promise<string> => {
          throw new Error(FAILING_TOOL_MESSAGE);
        },
      }),
    },
    experimental_telemetry: {
      isEnabled: true,
      functionId: AGENT_NAME,
      metadata: { userId: USER_ID, sessionId: SESSION_ID, tenant: TENANT },
      tracer,
    },
  });
  if (result.text !== ANSWER) throw new Error(`unexpected answer ${result.text}`);
}
