import { jsonObject, type Reader } from './values.js';

/**
 * Token counts. Our `input_tokens` and `output_tokens` are inclusive totals: `cache_read_tokens` and
 * `cache_write_tokens` are parts of `input_tokens`, `reasoning_tokens` a part of `output_tokens`
 * (docs/spans.md). The OTel GenAI conventions, OpenInference, Traceloop and the Vercel AI SDK (v5+,
 * `inputTokenDetails` in v6) report inclusive totals already. Langfuse's usage details are disjoint
 * usage types (Langfuse prices each key and sums them), so their parts are added to the totals here.
 */
export interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  reasoning_tokens?: number;
}

const INPUT_KEYS = ['input', 'promptTokens', 'prompt_tokens', 'input_tokens'];
const OUTPUT_KEYS = ['output', 'completionTokens', 'completion_tokens', 'output_tokens'];
const TOTAL_KEYS = ['total', 'totalTokens', 'total_tokens'];
/** The OpenAI shape (`promptTokens`, …) the Langfuse SDK also takes: OpenAI's counts are inclusive. */
const OPENAI_KEYS = new Set(['promptTokens', 'prompt_tokens', 'completionTokens', 'completion_tokens']);
const BASE_KEYS = new Set([...INPUT_KEYS, ...OUTPUT_KEYS, ...TOTAL_KEYS]);

/**
 * `langfuse.observation.usage_details`: a JSON object of usage types. Keys other than input, output
 * and total are sorted by name: cache reads (`input_cached_tokens`, `cache_read_input_tokens`, …),
 * cache writes (`cache_creation_input_tokens`, …), reasoning (`output_reasoning_tokens`, …), other
 * input or output parts (`input_audio_tokens`, …). They are disjoint from `input`/`output`, as
 * Langfuse prices them, unless the object is OpenAI-shaped or its `total` equals input + output.
 */
export const langfuseUsage: Reader<Usage> = (value) => {
  const details = jsonObject(value);
  if (!details) return undefined;
  const first = (keys: readonly string[]) => keys.map((k) => tokenCount(details[k])).find((n) => n !== undefined);
  const input = first(INPUT_KEYS);
  const output = first(OUTPUT_KEYS);
  const total = first(TOTAL_KEYS);
  let cacheRead: number | undefined;
  let cacheWrite: number | undefined;
  let reasoning: number | undefined;
  let otherInput = 0;
  let otherOutput = 0;
  let openAi = false;
  for (const [key, raw] of Object.entries(details)) {
    if (OPENAI_KEYS.has(key)) openAi = true;
    const n = tokenCount(raw);
    if (n === undefined || BASE_KEYS.has(key)) continue;
    const k = key.toLowerCase();
    if (k.includes('cache') && (k.includes('read') || k.includes('cached') || k.includes('hit')))
      cacheRead = (cacheRead ?? 0) + n;
    else if (k.includes('cache') && (k.includes('creat') || k.includes('write'))) cacheWrite = (cacheWrite ?? 0) + n;
    else if (k.includes('reasoning')) reasoning = (reasoning ?? 0) + n;
    else if (k.startsWith('input') || k.startsWith('prompt')) otherInput += n;
    else if (k.startsWith('output') || k.startsWith('completion')) otherOutput += n;
  }
  const inclusive = openAi || (total !== undefined && total === (input ?? 0) + (output ?? 0));
  const inputParts = (cacheRead ?? 0) + (cacheWrite ?? 0) + otherInput;
  const outputParts = (reasoning ?? 0) + otherOutput;
  const usage: Usage = {
    input_tokens: input === undefined && inputParts === 0 ? undefined : (input ?? 0) + (inclusive ? 0 : inputParts),
    output_tokens:
      output === undefined && outputParts === 0 ? undefined : (output ?? 0) + (inclusive ? 0 : outputParts),
    total_tokens: total,
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
    reasoning_tokens: reasoning,
  };
  return Object.values(usage).some((n) => n !== undefined) ? usage : undefined;
};

/** `langfuse.observation.cost_details`: its total (`total`, `totalCost`), else the sum of its amounts. */
export const langfuseCost: Reader<number> = (value) => {
  const details = jsonObject(value);
  if (!details) return undefined;
  for (const key of ['total', 'totalCost', 'total_cost']) {
    const n = details[key];
    if (typeof n === 'number' && Number.isFinite(n) && n >= 0) return n;
  }
  let sum: number | undefined;
  for (const n of Object.values(details)) {
    if (typeof n === 'number' && Number.isFinite(n) && n >= 0) sum = (sum ?? 0) + n;
  }
  return sum;
};

/**
 * Makes the parts fit the totals once every field is read, whichever conventions they came from. An
 * input count below its cached parts can only have left them out (Anthropic-style, e.g. the Vercel AI
 * SDK v4 and v5 Anthropic provider): they are added to it. Likewise reasoning and output. A total
 * missing beside its parts becomes their sum.
 */
export function fitParts(usage: Usage): Usage {
  const cached = (usage.cache_read_tokens ?? 0) + (usage.cache_write_tokens ?? 0);
  if (cached > 0 && (usage.input_tokens ?? 0) < cached) usage.input_tokens = (usage.input_tokens ?? 0) + cached;
  const reasoning = usage.reasoning_tokens ?? 0;
  if (reasoning > 0 && (usage.output_tokens ?? 0) < reasoning)
    usage.output_tokens = (usage.output_tokens ?? 0) + reasoning;
  return usage;
}

function tokenCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
