import { context, trace } from '@opentelemetry/api';
import { OpenAIInstrumentation } from '@arizeai/openinference-instrumentation-openai';
import { setMetadata, setSession, setUser, traceAgent, traceTool } from '@arizeai/openinference-core';
import OpenAI from 'openai';
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
  TOOL_NAME,
  TOOL_RESULT,
  USER_ID,
  WEATHER_TOOL,
  type ScenarioResult,
  type Target,
} from '../support/scenario.js';

/**
 * The scenario through OpenInference (Arize): the `openai` client instrumented by
 * @arizeai/openinference-instrumentation-openai against the fake provider, the agent and tool wrapped
 * with @arizeai/openinference-core's traceAgent/traceTool, and user, session and metadata set on the
 * context with setUser/setSession/setMetadata, as OpenInference's docs show. The failing call is the
 * book_table tool, which throws.
 */

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [WEATHER_TOOL];

export async function runOpenInference(target: Target): Promise<ScenarioResult> {
  useAsyncContext();
  const { provider, exporter } = otlpJsonProvider(target);
  trace.setGlobalTracerProvider(provider);
  const instrumentation = new OpenAIInstrumentation({ tracerProvider: provider });
  instrumentation.manuallyInstrument(OpenAI);
  const client = new OpenAI({ apiKey: 'sk-fake', baseURL: target.openaiBaseUrl, maxRetries: 0 });

  const getWeather = traceTool(async (args: { city: string }) => ({ ...TOOL_RESULT, city: args.city }), {
    name: TOOL_NAME,
  });
  const bookTable = traceTool(
    async (_args: typeof FAILING_TOOL_ARGS): Promise<string> => {
      throw new Error(FAILING_TOOL_MESSAGE);
    },
    { name: FAILING_TOOL_NAME },
  );
  const agent = traceAgent(
    async (question: string) => {
      const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
        { role: 'system', content: 'You are a travel agent.' },
        { role: 'user', content: question },
      ];
      const first = await client.chat.completions.create({ model: MODEL, messages, tools });
      const call = first.choices[0]!.message.tool_calls![0]!;
      if (call.type !== 'function') throw new Error('expected a function call');
      const weather = await getWeather(JSON.parse(call.function.arguments));
      messages.push(first.choices[0]!.message, {
        role: 'tool',
        tool_call_id: call.id,
        content: JSON.stringify(weather),
      });
      const second = await client.chat.completions.create({ model: MODEL, messages, tools });
      const answer = second.choices[0]!.message.content!;
      // The failing call is a tool: this instrumentation never ends the span of an `openai` call that
      // rejects (no span is sent at all), so a failing model call would leave no trace to look at.
      await bookTable(FAILING_TOOL_ARGS).catch(() => null);
      return answer;
    },
    { name: AGENT_NAME },
  );

  let ctx = context.active();
  ctx = setUser(ctx, { userId: USER_ID });
  ctx = setSession(ctx, { sessionId: SESSION_ID });
  ctx = setMetadata(ctx, { tenant: TENANT });
  const answer = await context.with(ctx, () => agent(QUESTION));
  if (answer !== ANSWER) throw new Error(`unexpected answer ${answer}`);

  instrumentation.disable();
  await provider.forceFlush();
  await provider.shutdown();
  exporter.assertExported();
  return { traceId: exporter.traceIds()[0]! };
}
