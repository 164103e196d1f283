import { createRequire } from 'node:module';
import { metrics, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { OpenAIInstrumentation } from '@opentelemetry/instrumentation-openai';
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_SYSTEM_INSTRUCTIONS,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_USER_ID,
} from '@opentelemetry/semantic-conventions/incubating';
import type OpenAIClient from 'openai';
import { otlpJsonProvider, useAsyncContext } from '../support/otel.js';
import {
  AGENT_NAME,
  ANSWER,
  FAILING_PROMPT,
  MODEL,
  QUESTION,
  SESSION_ID,
  TENANT,
  TOOL_ARGS,
  TOOL_NAME,
  TOOL_RESULT,
  USAGE,
  USER_ID,
  WEATHER_TOOL,
  type ScenarioResult,
  type Target,
} from '../support/scenario.js';

/**
 * The scenario in the OpenTelemetry GenAI semantic conventions: the `openai` client instrumented by
 * @opentelemetry/instrumentation-openai (model, tokens, errors on its `chat gpt-4o` spans; it emits
 * message content as log records, not on spans), and what the conventions ask the app itself to
 * record: the `invoke_agent` span (user, conversation, tenant, input/output messages), the
 * `execute_tool` span, and one `chat` span with its content on the span (gen_ai.input.messages …,
 * as instrumentations in "gen_ai_latest_experimental" mode write it).
 */

const tools: OpenAIClient.Chat.Completions.ChatCompletionTool[] = [WEATHER_TOOL];
const text = (role: string, content: string) => ({ role, parts: [{ type: 'text', content }] });

export async function runOtelGenAi(target: Target): Promise<ScenarioResult> {
  useAsyncContext();
  const { provider, exporter } = otlpJsonProvider(target);
  trace.setGlobalTracerProvider(provider);
  const instrumentation = new OpenAIInstrumentation({ captureMessageContent: true });
  // What registerInstrumentations() does; the meter provider also creates the instrumentation's histograms.
  instrumentation.setTracerProvider(provider);
  instrumentation.setMeterProvider(metrics.getMeterProvider());
  // The instrumentation patches `openai` when it is required (CommonJS) after the instrumentation exists.
  const OpenAI = createRequire(import.meta.url)('openai') as typeof OpenAIClient;
  const client = new OpenAI({ apiKey: 'sk-fake', baseURL: target.openaiBaseUrl, maxRetries: 0 });
  const tracer = provider.getTracer('travel-agent', '1.0.0');

  const rootAttributes = {
    [ATTR_GEN_AI_OPERATION_NAME]: 'invoke_agent',
    [ATTR_GEN_AI_AGENT_NAME]: AGENT_NAME,
    [ATTR_GEN_AI_PROVIDER_NAME]: 'openai',
    [ATTR_GEN_AI_REQUEST_MODEL]: MODEL,
    [ATTR_GEN_AI_CONVERSATION_ID]: SESSION_ID,
    [ATTR_USER_ID]: USER_ID,
    tenant: TENANT,
    [ATTR_GEN_AI_INPUT_MESSAGES]: JSON.stringify([text('user', QUESTION)]),
  };
  const traceId = await tracer.startActiveSpan(
    `invoke_agent ${AGENT_NAME}`,
    { kind: SpanKind.INTERNAL, attributes: rootAttributes },
    async (root) => {
      const messages: OpenAIClient.Chat.Completions.ChatCompletionMessageParam[] = [
        { role: 'system', content: 'You are a travel agent.' },
        { role: 'user', content: QUESTION },
      ];
      const first = await client.chat.completions.create({ model: MODEL, messages, tools });
      const call = first.choices[0]!.message.tool_calls![0]!;
      if (call.type !== 'function') throw new Error('expected a function call');

      const weather = await tracer.startActiveSpan(
        `execute_tool ${TOOL_NAME}`,
        {
          attributes: {
            [ATTR_GEN_AI_OPERATION_NAME]: 'execute_tool',
            [ATTR_GEN_AI_TOOL_NAME]: TOOL_NAME,
            [ATTR_GEN_AI_TOOL_TYPE]: 'function',
            [ATTR_GEN_AI_TOOL_CALL_ID]: call.id,
            [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: call.function.arguments,
          },
        },
        async (span) => {
          const result = { ...TOOL_RESULT, city: (JSON.parse(call.function.arguments) as typeof TOOL_ARGS).city };
          span.setAttribute(ATTR_GEN_AI_TOOL_CALL_RESULT, JSON.stringify(result));
          span.end();
          return result;
        },
      );

      // The answering call, recorded by the app with its content on the span.
      tracer.startActiveSpan(
        `chat ${MODEL}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            [ATTR_GEN_AI_OPERATION_NAME]: 'chat',
            [ATTR_GEN_AI_PROVIDER_NAME]: 'openai',
            [ATTR_GEN_AI_REQUEST_MODEL]: MODEL,
            [ATTR_GEN_AI_SYSTEM_INSTRUCTIONS]: JSON.stringify([{ type: 'text', content: 'You are a travel agent.' }]),
            [ATTR_GEN_AI_INPUT_MESSAGES]: JSON.stringify([
              text('user', QUESTION),
              { role: 'assistant', parts: [{ type: 'tool_call', id: call.id, name: TOOL_NAME, arguments: TOOL_ARGS }] },
              { role: 'tool', parts: [{ type: 'tool_call_response', id: call.id, response: weather }] },
            ]),
          },
        },
        (span) => {
          span.setAttributes({
            [ATTR_GEN_AI_RESPONSE_MODEL]: 'gpt-4o-2024-08-06',
            [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: ['stop'],
            [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: USAGE.input,
            [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: USAGE.output,
            [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: USAGE.cachedInput,
            [ATTR_GEN_AI_OUTPUT_MESSAGES]: JSON.stringify([{ ...text('assistant', ANSWER), finish_reason: 'stop' }]),
          });
          span.end();
        },
      );

      // The failing call: the agent catches it and still answers.
      await client.chat.completions
        .create({ model: MODEL, messages: [{ role: 'user', content: `${FAILING_PROMPT} ${ANSWER}` }] })
        .catch(() => null);

      root.setAttribute(
        ATTR_GEN_AI_OUTPUT_MESSAGES,
        JSON.stringify([{ ...text('assistant', ANSWER), finish_reason: 'stop' }]),
      );
      root.setStatus({ code: SpanStatusCode.OK });
      root.end();
      return root.spanContext().traceId;
    },
  );

  instrumentation.disable();
  await provider.forceFlush();
  await provider.shutdown();
  exporter.assertExported();
  return { traceId };
}
