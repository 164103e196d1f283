/**
 * The one scenario every integration test and recorded fixture plays (test/fixtures/otlp/README.md):
 * a travel agent for user-42 in session sess-7 (metadata tenant=acme) asks gpt-4o about the weather,
 * calls the get_weather tool, answers, and makes one call that fails. Each library plays it through
 * its own API; these are the values the tests look for afterwards.
 */

export const USER_ID = 'user-42';
export const SESSION_ID = 'sess-7';
export const TENANT = 'acme';
export const MODEL = 'gpt-4o';
/** The prompt version the Langfuse scenario's first generation names (docs/prompts.md, "Linking spans"). */
export const LANGFUSE_PROMPT = { name: 'travel/planner', version: 3, isFallback: false };
export const AGENT_NAME = 'travel-agent';
/** The trace name a Langfuse user sets (`propagateAttributes({traceName})`), apart from the root observation's. */
export const TRACE_NAME = 'travel-booking';
/** The app's release and version, as the Langfuse SDK sends them (`release`, `version`). */
export const RELEASE = 'travel-app@1.4.0';
export const APP_VERSION = 'booking-flow-2';
export const QUESTION = 'What is the weather in Paris today?';
export const TOOL_NAME = 'get_weather';
export const TOOL_CALL_ID = 'call_weather_1';
export const TOOL_ARGS = { city: 'Paris' };
export const TOOL_RESULT = { city: 'Paris', temperature_c: 18, conditions: 'sunny' };
/** The get_weather tool as the OpenAI chat completions API declares it. */
export const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: TOOL_NAME,
    description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
export const ANSWER = 'It is 18°C and sunny in Paris.';
/** The prompt of the failing call; the fake provider answers it with FAILURE_STATUS. */
export const FAILING_PROMPT = 'Translate the answer into Klingon.';
export const FAILURE_STATUS = 429;
export const FAILURE_MESSAGE = 'Rate limit reached for gpt-4o: retry after 20s';

/** Usage of every successful call (the fake provider's and the mock models' answers). */
export const USAGE = { input: 120, output: 30, cachedInput: 40 } as const;

/** Langfuse is the one library here that sends a cost: this one, per generation, in USD. */
export const SENT_COST = { input: 0.0003, output: 0.0003, total: 0.0006 } as const;

/** Where a scenario sends its spans: a Sightline API (or the fixture recorder) and the fake provider. */
export interface Target {
  /** Origin of the receiving server, e.g. `http://127.0.0.1:4318`. */
  origin: string;
  /** A Sightline API key: Bearer token of the OTLP exporters, Langfuse secret key. */
  apiKey: string;
  /** The fake OpenAI-compatible provider's base URL, ending in `/v1`. */
  openaiBaseUrl: string;
}

/** The OTLP/HTTP traces URL of Sightline's public API (docs/spans.md, "OTLP"). */
export function otlpTracesUrl(target: Target): string {
  return `${target.origin}/api/v1/public/otel/v1/traces`;
}

export interface ScenarioResult {
  /** Lowercase hex trace id of the scenario's trace. */
  traceId: string;
}

/** Resource attributes every scenario's provider carries (some libraries add their own). */
export const RESOURCE = { 'service.name': 'travel-agent-service', 'deployment.environment.name': 'staging' };

/**
 * The failing call of the Vercel AI SDK and OpenInference scenarios is a tool that throws: the AI SDK
 * runs one agent as one generateText (a failing model call would fail it whole), and OpenInference's
 * `openai` instrumentation sends no span at all for a call that rejects.
 */
export const FAILING_TOOL_NAME = 'book_table';
export const FAILING_TOOL_ARGS = { restaurant: 'Le Procope', time: '20:00' };
export const FAILING_TOOL_MESSAGE = 'No table free at 20:00';
