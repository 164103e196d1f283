import { LangfuseSpanProcessor } from '@langfuse/otel';
import {
  propagateAttributes,
  setActiveTraceIO,
  setLangfuseTracerProvider,
  startActiveObservation,
  startObservation,
} from '@langfuse/tracing';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { useAsyncContext } from '../support/otel.js';
import {
  AGENT_NAME,
  ANSWER,
  FAILING_PROMPT,
  LANGFUSE_PROMPT,
  FAILURE_MESSAGE,
  MODEL,
  QUESTION,
  RELEASE,
  APP_VERSION,
  RESOURCE,
  SENT_COST,
  SESSION_ID,
  TENANT,
  TOOL_ARGS,
  TOOL_CALL_ID,
  TOOL_NAME,
  TOOL_RESULT,
  TRACE_NAME,
  USAGE,
  USER_ID,
  type ScenarioResult,
  type Target,
} from '../support/scenario.js';

/**
 * The scenario through the Langfuse JS SDK (v4+, OpenTelemetry based): LangfuseSpanProcessor with
 * baseUrl = Sightline, any public key and a Sightline API key as secret key (it posts OTLP JSON to
 * `${baseUrl}/api/public/otel/v1/traces` with Basic auth), an agent observation with two generations
 * (model, usageDetails with cached tokens, costDetails), a tool, and a failing generation (level
 * ERROR), user, session, tenant and the app's version set with propagateAttributes, its release on
 * the processor. No LLM is called: a Langfuse user
 * reports the generation's details by hand, as here.
 */

const usageDetails = {
  input: USAGE.input,
  output: USAGE.output,
  total: USAGE.input + USAGE.output,
  input_cached_tokens: USAGE.cachedInput,
};
const costDetails = { ...SENT_COST };

export async function runLangfuse(target: Target): Promise<ScenarioResult> {
  useAsyncContext();
  const processor = new LangfuseSpanProcessor({
    publicKey: 'pk-lf-anything',
    secretKey: target.apiKey,
    baseUrl: target.origin,
    exportMode: 'immediate',
    release: RELEASE,
  });
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes(RESOURCE), spanProcessors: [processor] });
  setLangfuseTracerProvider(provider);

  let traceId = '';
  const messages = [
    { role: 'system', content: 'You are a travel agent.' },
    { role: 'user', content: QUESTION },
  ];
  await propagateAttributes(
    {
      userId: USER_ID,
      sessionId: SESSION_ID,
      metadata: { tenant: TENANT },
      traceName: TRACE_NAME,
      tags: ['travel', 'beta'],
      version: APP_VERSION,
    },
    () =>
      startActiveObservation(
        AGENT_NAME,
        async (agent) => {
          traceId = agent.traceId;
          agent.update({ input: { question: QUESTION } });
          setActiveTraceIO({ input: { question: QUESTION } });

          const toolCall = {
            id: TOOL_CALL_ID,
            type: 'function',
            function: { name: TOOL_NAME, arguments: JSON.stringify(TOOL_ARGS) },
          };
          // Made with a fetched prompt: the SDK sets langfuse.observation.prompt.name/.version (docs/prompts.md).
          startObservation(
            `chat ${MODEL}`,
            { model: MODEL, input: messages, modelParameters: { temperature: 0 }, prompt: LANGFUSE_PROMPT },
            { asType: 'generation' },
          )
            .update({ output: { role: 'assistant', tool_calls: [toolCall] }, usageDetails, costDetails })
            .end();

          startObservation(TOOL_NAME, { input: TOOL_ARGS }, { asType: 'tool' }).update({ output: TOOL_RESULT }).end();

          const followUp = [
            ...messages,
            { role: 'assistant', tool_calls: [toolCall] },
            { role: 'tool', tool_call_id: TOOL_CALL_ID, content: JSON.stringify(TOOL_RESULT) },
          ];
          startObservation(
            `chat ${MODEL}`,
            { model: MODEL, input: followUp, modelParameters: { temperature: 0 } },
            { asType: 'generation' },
          )
            .update({ output: { role: 'assistant', content: ANSWER }, usageDetails, costDetails })
            .end();

          // The failing call: Langfuse marks it with level ERROR and a status message.
          startObservation(
            `chat ${MODEL}`,
            { model: MODEL, input: [{ role: 'user', content: `${FAILING_PROMPT} ${ANSWER}` }] },
            { asType: 'generation' },
          )
            .update({ level: 'ERROR', statusMessage: FAILURE_MESSAGE })
            .end();

          agent.update({ output: { answer: ANSWER } });
          setActiveTraceIO({ output: { answer: ANSWER } });
        },
        { asType: 'agent' },
      ),
  );

  await processor.forceFlush().catch((error: Error) => {
    throw new Error(
      `the Langfuse exporter's POST to ${target.origin}/api/public/otel/v1/traces failed: ${error.message}`,
    );
  });
  await provider.shutdown();
  setLangfuseTracerProvider(null);
  return { traceId };
}
