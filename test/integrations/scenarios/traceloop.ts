import { SpanStatusCode, trace } from '@opentelemetry/api';
import * as traceloop from '@traceloop/node-server-sdk';
import OpenAI from 'openai';
import {
  AGENT_NAME,
  ANSWER,
  FAILING_PROMPT,
  MODEL,
  QUESTION,
  SESSION_ID,
  TENANT,
  TOOL_NAME,
  TOOL_RESULT,
  USER_ID,
  WEATHER_TOOL,
  type ScenarioResult,
  type Target,
} from '../support/scenario.js';

/**
 * The scenario through OpenLLMetry (@traceloop/node-server-sdk): initialize with Sightline's OTLP
 * base URL and an API key, the `openai` client instrumented through `instrumentModules`, a workflow
 * carrying the association properties (user, session, tenant), an agent inside it, a tool, and a task
 * whose model call fails (reported on the task's span by the app). Traceloop exports OTLP protobuf to `${baseUrl}/v1/traces`.
 */

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [WEATHER_TOOL];

export async function runTraceloop(target: Target): Promise<ScenarioResult> {
  // The SDK starts a NodeSDK: no metrics or logs exporters for it to start.
  process.env.OTEL_METRICS_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  traceloop.initialize({
    appName: 'travel-agent-service',
    baseUrl: `${target.origin}/api/v1/public/otel`,
    apiKey: target.apiKey,
    disableBatch: true,
    traceloopSyncEnabled: false,
    silenceInitializationMessage: true,
    // The SDK's typings name openai's CommonJS declarations, this ESM import the .d.mts ones: same class.
    instrumentModules: { openAI: OpenAI as never },
  });
  const client = new OpenAI({ apiKey: 'sk-fake', baseURL: target.openaiBaseUrl, maxRetries: 0 });

  let traceId = '';
  const answer = await traceloop.withWorkflow(
    { name: 'plan_trip', associationProperties: { userId: USER_ID, sessionId: SESSION_ID, tenant: TENANT } },
    async (question: string) => {
      traceId = trace.getActiveSpan()!.spanContext().traceId;
      const reply: string = await traceloop.withAgent(
        { name: AGENT_NAME },
        async (prompt: string) => {
          const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
            { role: 'system', content: 'You are a travel agent.' },
            { role: 'user', content: prompt },
          ];
          const first = await client.chat.completions.create({ model: MODEL, messages, tools });
          const call = first.choices[0]!.message.tool_calls![0]!;
          if (call.type !== 'function') throw new Error('expected a function call');
          const getWeather = async (args: { city: string }) => ({ ...TOOL_RESULT, city: args.city });
          const weather = await traceloop.withTool(
            { name: TOOL_NAME },
            getWeather,
            JSON.parse(call.function.arguments),
          );
          messages.push(first.choices[0]!.message, {
            role: 'tool',
            tool_call_id: call.id,
            content: JSON.stringify(weather),
          });
          const second = await client.chat.completions.create({ model: MODEL, messages, tools });
          return second.choices[0]!.message.content!;
        },
        question,
      );
      // The failing call, in a task that reports it on its span and still answers: neither the task
      // wrapper nor the `openai` instrumentation ends its span when the wrapped call rejects, so an
      // uncaught failure would send no span at all.
      await traceloop.withTask(
        { name: 'translate' },
        async (text: string) => {
          try {
            return await client.chat.completions.create({
              model: MODEL,
              messages: [{ role: 'user', content: `${FAILING_PROMPT} ${text}` }],
            });
          } catch (error) {
            const span = trace.getActiveSpan()!;
            span.recordException(error as Error);
            span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
            return null;
          }
        },
        reply,
      );
      return reply;
    },
    QUESTION,
  );
  if (answer !== ANSWER) throw new Error(`unexpected answer ${answer}`);
  await traceloop.forceFlush();
  return { traceId };
}
