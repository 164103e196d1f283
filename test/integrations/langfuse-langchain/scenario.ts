import { awaitAllCallbacks } from '@langchain/core/callbacks/promises';
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { RunnableLambda, type RunnableConfig } from '@langchain/core/runnables';
import { tool } from '@langchain/core/tools';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { FakeStreamingChatModel } from '@langchain/core/utils/testing';
import { CallbackHandler } from 'langfuse-langchain';
import { z } from 'zod';
import {
  AGENT_NAME,
  ANSWER,
  FAILING_PROMPT,
  FAILURE_MESSAGE,
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
} from '../support/scenario.js';

/**
 * The shared scenario (../support/scenario.ts) through LangChain 0.3 and Langfuse's LangChain callback
 * handler (`langfuse-langchain` 3.x, which posts to /api/public/ingestion): a `travel-agent` runnable
 * asks a fake gpt-4o, which calls get_weather; the tool runs on that tool call; the model answers; one
 * more call fails. User and session travel as `langfuseUserId` / `langfuseSessionId` in the run's
 * metadata, as Langfuse's docs show; tenant is plain metadata.
 */

export interface LangfuseTarget {
  /** Origin the handler's baseUrl points at: a Sightline API, or the fixture recorder's stub. */
  origin: string;
  /** The Langfuse secret key: a Sightline API key. */
  apiKey: string;
}

/** The handler's run id of the root chain: langfuse-langchain makes it the trace id too. */
export interface LangchainResult {
  traceId: string;
}

const usage = {
  input_tokens: USAGE.input,
  output_tokens: USAGE.output,
  total_tokens: USAGE.input + USAGE.output,
  input_token_details: { cache_read: USAGE.cachedInput },
};

/**
 * LangChain's fake streaming chat model, answering its scripted messages in turn with the usage and
 * model name a provider's chat model reports (`usage_metadata`, `response_metadata.model_name`,
 * `ls_model_name`): the stock fake keeps only their text and tool calls.
 */
class ScriptedChatModel extends FakeStreamingChatModel {
  private turn = 0;
  constructor(private readonly script: AIMessage[]) {
    super({ responses: script });
  }
  /** The tools as an OpenAI-style provider gets them; the stock fake's bindTools answers with a plain fake. */
  override bindTools(tools: Parameters<FakeStreamingChatModel['bindTools']>[0]) {
    return this.withConfig({ tools: tools.map((t) => convertToOpenAITool(t)) } as this['ParsedCallOptions']);
  }
  override getLsParams(options: this['ParsedCallOptions']) {
    return { ...super.getLsParams(options), ls_provider: 'openai', ls_model_name: MODEL };
  }
  override async _generate(): Promise<ChatResult> {
    const message = this.script[this.turn++];
    if (!message) throw new Error('the script has no more answers');
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] };
  }
}

export async function runLangfuseLangchain(target: LangfuseTarget): Promise<LangchainResult> {
  const handler = new CallbackHandler({
    publicKey: 'pk-lf-anything',
    secretKey: target.apiKey,
    baseUrl: target.origin,
    flushAt: 1000,
    flushInterval: 60_000,
  });
  const model = new ScriptedChatModel([
    new AIMessage({
      content: '',
      tool_calls: [{ id: TOOL_CALL_ID, name: TOOL_NAME, args: TOOL_ARGS, type: 'tool_call' }],
      // The provider's own form too, as ChatOpenAI keeps it: the handler shows a call's tool calls from it.
      additional_kwargs: {
        tool_calls: [
          { id: TOOL_CALL_ID, type: 'function', function: { name: TOOL_NAME, arguments: JSON.stringify(TOOL_ARGS) } },
        ],
      },
      usage_metadata: usage,
      response_metadata: { model_name: `${MODEL}-2024-08-06` },
    }),
    new AIMessage({ content: ANSWER, usage_metadata: usage, response_metadata: { model_name: `${MODEL}-2024-08-06` } }),
  ]);
  const failing = new FakeStreamingChatModel({ thrownErrorString: FAILURE_MESSAGE });
  const weather = tool(async () => JSON.stringify(TOOL_RESULT), {
    name: TOOL_NAME,
    description: 'Current weather in a city',
    schema: z.object({ city: z.string() }),
  });

  // Each call gets the config LangChain hands the lambda, so that its run is the agent's child: under
  // the test harness the AsyncLocalStorage LangChain would otherwise find it through is not set up.
  const agent = RunnableLambda.from(async (question: string, config?: RunnableConfig) => {
    const messages: BaseMessage[] = [new SystemMessage('You are a travel agent.'), new HumanMessage(question)];
    const call = await model.bindTools([weather]).invoke(messages, config);
    const toolMessage = await weather.invoke(call.tool_calls![0]!, config);
    const answer = await model.invoke([...messages, call, toolMessage], config);
    await failing.invoke([new HumanMessage(FAILING_PROMPT)], config).catch(() => undefined);
    return answer.content as string;
  });

  let traceId = '';
  const answer = await agent.invoke(QUESTION, {
    runName: AGENT_NAME,
    callbacks: [handler],
    tags: ['beta', 'travel'],
    metadata: { langfuseUserId: USER_ID, langfuseSessionId: SESSION_ID, tenant: TENANT },
  });
  if (answer !== ANSWER) throw new Error(`unexpected answer ${answer}`);
  // LangChain 0.3 runs callbacks in the background: wait for them before the handler flushes.
  await awaitAllCallbacks();
  traceId = handler.getLangchainRunId() ?? '';
  await handler.shutdownAsync();
  if (!traceId) throw new Error('the handler saw no root run');
  return { traceId };
}
