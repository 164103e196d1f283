import type { SpanInput } from '../traces/span-input.js';

/**
 * Realistic LLM-agent traces for demos, benchmarks and load tests. Pure and deterministic: the output
 * depends only on the options (no Math.random, no clock), so a benchmark can be re-run on the same data.
 */

export type GenerateOptions = {
  traces: number;
  startMs: number;
  endMs: number;
  seed?: number;
  evaluationShare?: number;
  errorShare?: number;
  payloadBytes?: number;
};

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const PAD2 = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const PAD3 = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/** mulberry32: 32-bit state, fast, statistically fine for demo data. */
class Rng {
  constructor(private state: number) {}
  u32(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  float = (): number => this.u32() / 4_294_967_296;
  /** Inclusive on both ends. */
  int = (min: number, max: number): number => min + Math.floor(this.float() * (max - min + 1));
  chance = (p: number): boolean => this.float() < p;
  pick = <T>(items: readonly T[]): T => items[Math.floor(this.float() * items.length)];
  /** Latencies are long-tailed: log-uniform gives many fast calls and a few slow ones. */
  logUniform = (min: number, max: number): number => min * Math.pow(max / min, this.float());
  /** OTel-style ids: 4 words → 32 hex chars (trace), 2 → 16 (span). A table: Number#toString(16) is slow. */
  hex(words: number): string {
    let s = '';
    for (let i = 0; i < words; i++) {
      const w = this.u32();
      s += HEX[w >>> 24] + HEX[(w >>> 16) & 255] + HEX[(w >>> 8) & 255] + HEX[w & 255];
    }
    return s;
  }
}

/** List prices in USD per million tokens (2024); msPerToken drives the latency of a call. */
type Model = { name: string; inPerM: number; outPerM: number; msPerToken: number };
const GPT_4O: Model = { name: 'gpt-4o', inPerM: 2.5, outPerM: 10, msPerToken: 12 };
const GPT_4O_MINI: Model = { name: 'gpt-4o-mini', inPerM: 0.15, outPerM: 0.6, msPerToken: 7 };
const SONNET: Model = { name: 'claude-3-5-sonnet', inPerM: 3, outPerM: 15, msPerToken: 14 };
const HAIKU: Model = { name: 'claude-3-haiku', inPerM: 0.25, outPerM: 1.25, msPerToken: 6 };
const LLAMA: Model = { name: 'llama-3.1-70b', inPerM: 0.88, outPerM: 0.88, msPerToken: 9 };
const LLM_MODELS = [GPT_4O, GPT_4O_MINI, SONNET, HAIKU, LLAMA];
const EMBEDDING: Model = { name: 'text-embedding-3-small', inPerM: 0.02, outPerM: 0, msPerToken: 0 };

/** `retrieval`: how often the agent embeds the question and searches the vector index first. */
type Agent = { name: string; models: Model[]; tools: string[]; retrieval: number; system: string; questions: string[] };
const AGENTS: Agent[] = [
  {
    name: 'support-agent',
    models: [GPT_4O, GPT_4O_MINI, HAIKU],
    tools: ['search_docs', 'lookup_order', 'send_email'],
    retrieval: 0.5,
    system:
      'You are a friendly support assistant for Acme Cloud. Answer from the documentation, cite sources, and escalate billing disputes to a human.',
    questions: [
      'My deploy has been stuck on "pending" for an hour, what can I do?',
      'How do I rotate my API key without downtime?',
      'Where is my order #48213?',
    ],
  },
  {
    name: 'research-agent',
    models: [SONNET, GPT_4O],
    tools: ['web_search', 'search_docs', 'get_weather'],
    retrieval: 0.6,
    system:
      'You are a careful research assistant. Break the question into steps, use tools to gather evidence, and answer briefly with citations.',
    questions: [
      'Compare the latency of the three largest vector databases.',
      'Will it rain in Lisbon next week?',
      'Summarise recent work on speculative decoding.',
    ],
  },
  {
    name: 'sql-assistant',
    models: [GPT_4O, LLAMA],
    tools: ['run_sql', 'describe_table'],
    retrieval: 0.2,
    system:
      'You translate questions into ClickHouse SQL. Only read data, never write. Inspect the schema first and explain the result in one paragraph.',
    questions: [
      'Which customers churned last quarter?',
      'What was the weekly revenue by region in March?',
      'Top 10 products by refund rate',
    ],
  },
  {
    name: 'rag-chat',
    models: [GPT_4O_MINI, HAIKU, LLAMA],
    tools: ['search_docs'],
    retrieval: 1,
    system: 'Answer using only the provided context. If the context does not contain the answer, say you do not know.',
    questions: [
      'What is the retention period for audit logs?',
      'How do I configure SSO with Okta?',
      'Does the free tier include webhooks?',
    ],
  },
];

const PLAN_NAMES = ['plan', 'choose-tool', 'classify-intent', 'reflect', 'rewrite-query'];
const CHAIN_NAMES = ['summarize-chain', 'rerank-and-answer', 'plan-and-execute', 'query-rewrite'];
const TOOL_MS: Record<string, [number, number]> = {
  search_docs: [40, 800],
  lookup_order: [60, 900],
  send_email: [120, 1500],
  web_search: [300, 2000],
  get_weather: [80, 900],
  run_sql: [30, 2000],
  describe_table: [20, 300],
};
const CITIES = ['Lisbon', 'Berlin', 'Austin', 'Singapore', 'Nairobi', 'Toronto'];
const TABLES = ['orders', 'customers', 'subscriptions', 'refunds'];

// Shared between spans to keep generation allocation-light; frozen so a consumer that mutates one
// cannot change other spans.
const LLM_META = Object.freeze({ temperature: '0.2', prompt_version: 'v7' });
const RETRIEVER_META = Object.freeze({ index: 'docs-v3', top_k: '5' });
const TOOL_META: Record<string, Readonly<Record<string, string>>> = Object.fromEntries(
  Object.keys(TOOL_MS).map((tool, i) => [tool, Object.freeze({ tool_version: `1.${i + 2}.${i % 3}` })]),
);

const ERROR_MESSAGES: Record<string, string> = {
  RateLimitError:
    'Rate limit reached on tokens per min (TPM): limit 30000, used 29412, requested 1840. Please try again in 1.2s.',
  TimeoutError: 'Request timed out after 30000 ms',
  ContextLengthExceeded:
    "This model's maximum context length is 128000 tokens; your messages resulted in 131072 tokens.",
  ToolExecutionError: 'Tool raised an exception: upstream service returned 502 Bad Gateway',
  ValidationError: "Tool arguments failed validation: 'query' is a required property",
};
/** The failures each span kind can have. */
const ERROR_TYPES: Record<string, string[]> = {
  llm: ['RateLimitError', 'TimeoutError', 'ContextLengthExceeded'],
  tool: ['ToolExecutionError', 'ValidationError', 'TimeoutError'],
  retriever: ['TimeoutError'],
  embedding: ['RateLimitError', 'TimeoutError'],
};

const USERS = 200;
const USER_IDS = Array.from({ length: USERS }, (_, i) => `user_${String(i).padStart(4, '0')}`);
const REGIONS = ['us-east-1', 'eu-west-1', 'ap-southeast-2'];
const TIERS = ['free', 'free', 'free', 'free', 'free', 'free', 'pro', 'pro', 'pro', 'enterprise']; // by user % 10
const APP_VERSIONS = ['2.13.0', '2.13.1', '2.14.0', '2.14.2']; // rolled out one after the other over the range

// One pre-built text of ~64 KiB; payloads are slices of it (V8 slices share the parent string).
const SENTENCES = [
  'The deployment is waiting for the build cache to warm up.',
  'API keys can be rotated by creating a second key and revoking the first.',
  'The order was shipped from Rotterdam and should arrive within three business days.',
  'Revenue grew eleven percent, driven by the enterprise segment.',
  'Audit logs are retained for 400 days on the enterprise plan.',
  'Speculative decoding uses a small draft model that the large model verifies.',
  'The forecast for Lisbon shows light rain on Tuesday.',
  'To configure SSO, add Sightline as a SAML application in Okta.',
  'The query returned 48 customers who cancelled in the last 90 days.',
  'Here is a summary of the three most relevant passages, with sources.',
  'The tool returned an empty result, so I will broaden the search and try again.',
];
const CORPUS = ((rng) => Array.from({ length: 1000 }, () => rng.pick(SENTENCES)).join(' '))(new Rng(0x5eed));

/**
 * `new Date(ms).toISOString()` for whole ms, with the `YYYY-MM-DDTHH:MM:` prefix cached per minute: the
 * spans of a trace share their minute, and toISOString alone took half the generation time.
 */
let isoMinute = NaN;
let isoPrefix = '';
function iso(ms: number): string {
  const minute = Math.floor(ms / 60_000);
  if (minute !== isoMinute) {
    isoMinute = minute;
    isoPrefix = new Date(minute * 60_000).toISOString().slice(0, -7);
  }
  const rest = ms - minute * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${isoPrefix}${PAD2[seconds]}.${PAD3[rest - seconds * 1000]}Z`;
}

type TracePlan = {
  start: number;
  user: number;
  sessionId: string | undefined;
  environment: string;
  appVersion: string;
};

/** Builds one trace at a time; one instance serves every trace, so per-trace state allocates nothing. */
class TraceBuilder {
  private spans: SpanInput[] = [];
  private traceId = '';
  private plan!: TracePlan;
  private evaluationRunId: string | undefined;
  private agent = AGENTS[0];
  private model = GPT_4O;
  private cursor = 0; // ms where the next sequential step starts

  constructor(
    private readonly rng: Rng,
    private readonly payloadBytes: number,
  ) {}

  build(plan: TracePlan, evaluationDay: string | undefined, isError: boolean): SpanInput[] {
    const rng = this.rng;
    this.spans = [];
    this.plan = plan;
    this.traceId = rng.hex(4);
    this.agent = rng.pick(AGENTS);
    this.model = rng.pick(this.agent.models);
    // A nightly evaluation run per day and agent.
    this.evaluationRunId = evaluationDay && `eval-${evaluationDay}-${this.agent.name}`;
    const root = this.span(null, this.agent.name, 'agent', plan.start);
    root.input = rng.pick(this.agent.questions);
    if (!evaluationDay) {
      // Offline evaluations replay a dataset: no end user, no session.
      root.user_id = USER_IDS[plan.user];
      if (plan.sessionId) root.session_id = plan.sessionId;
    }
    root.metadata = {
      app_version: plan.appVersion,
      region: REGIONS[plan.user % 3],
      customer_tier: TIERS[plan.user % 10],
    };
    this.cursor = plan.start + rng.int(1, 15);
    this.children(root.span_id, 2 + Math.floor(11 * rng.float() ** 1.6), true); // 2–12, mostly few
    root.end_time = iso(this.cursor + rng.int(1, 40));
    root.output = this.text(this.payloadBytes * 0.3);
    if (isError) this.injectErrors(root);
    return this.spans;
  }

  /** Ends at `start` until the caller knows better; appended in start order. */
  private span(parent: string | null, name: string, kind: string, start: number, end = start): SpanInput {
    const span: SpanInput = {
      trace_id: this.traceId,
      span_id: this.rng.hex(2),
      parent_span_id: parent,
      name,
      kind,
      start_time: iso(start),
      end_time: iso(end),
      status: this.rng.chance(0.08) ? 'unset' : 'ok', // 8%: instrumentations that never set a status
      environment: this.plan.environment,
    };
    if (this.evaluationRunId) span.evaluation_run_id = this.evaluationRunId;
    this.spans.push(span);
    return span;
  }

  /** Steps run one after another: a leaf starts at the cursor, the next a few ms after it ends. */
  private leaf(parent: string, name: string, kind: string, durationMs: number): SpanInput {
    const start = this.cursor;
    this.cursor = start + Math.round(durationMs);
    const span = this.span(parent, name, kind, start, this.cursor);
    this.cursor += this.rng.int(1, 30);
    return span;
  }

  /** Exactly `count` descendants: retrieval maybe, then llm/tool rounds (maybe a chain), then the answer. */
  private children(parent: string, count: number, top: boolean): void {
    const rng = this.rng;
    let left = count - 1;
    if (top && left >= 2 && rng.chance(this.agent.retrieval)) {
      this.embedding(parent);
      this.retriever(parent);
      left -= 2;
    }
    while (left > 0) {
      if (top && left >= 3 && rng.chance(0.2)) {
        const size = rng.int(2, Math.min(3, left - 1));
        const chain = this.span(parent, rng.pick(CHAIN_NAMES), 'chain', this.cursor);
        chain.input = rng.chance(0.3) ? null : this.text(120);
        this.cursor += rng.int(1, 5);
        this.children(chain.span_id, size, false);
        chain.end_time = iso(this.cursor);
        chain.output = rng.chance(0.3) ? null : this.text(160);
        this.cursor += rng.int(1, 20);
        left -= size + 1;
      } else if (left >= 2) {
        this.llm(parent, rng.pick(PLAN_NAMES));
        this.tool(parent);
        left -= 2;
      } else {
        this.tool(parent);
        left -= 1;
      }
    }
    this.llm(parent, top ? 'generate-answer' : 'summarize');
  }

  private llm(parent: string, name: string): void {
    const rng = this.rng;
    const model = rng.chance(0.8) ? this.model : rng.pick(LLM_MODELS);
    const budget = this.payloadBytes * (0.6 + 0.8 * rng.float());
    const outChars = Math.round(budget * (0.15 + 0.25 * rng.float()));
    // Prompts carry hidden context (tool schemas, retrieved passages) beyond the captured messages.
    const inputTokens = Math.ceil((budget - outChars) / 4) + rng.int(0, 2500);
    const outputTokens = Math.max(1, Math.ceil(outChars / 4));
    const ms = 250 + outputTokens * model.msPerToken * (0.7 + rng.float()) + inputTokens * 0.04;
    const span = this.leaf(parent, name, 'llm', Math.min(8000, Math.max(300, ms)));
    span.model_name = model.name;
    const system = this.agent.system;
    span.input = [
      { role: 'system', content: system },
      { role: 'user', content: this.text(Math.max(16, budget - outChars - system.length)) },
    ];
    span.output = { role: 'assistant', content: this.text(outChars) };
    span.input_tokens = inputTokens;
    span.output_tokens = outputTokens;
    span.cost = (inputTokens * model.inPerM + outputTokens * model.outPerM) / 1e6;
    if (rng.chance(0.3)) span.metadata = LLM_META;
  }

  private tool(parent: string): void {
    const rng = this.rng;
    const name = rng.pick(this.agent.tools);
    const span = this.leaf(parent, name, 'tool', rng.logUniform(...TOOL_MS[name]));
    [span.input, span.output] = this.toolCall(name);
    if (rng.chance(0.5)) span.metadata = TOOL_META[name];
  }

  private toolCall(name: string): [object, object] {
    const rng = this.rng;
    switch (name) {
      case 'get_weather':
        return [
          { city: rng.pick(CITIES) },
          { temp_c: rng.int(-5, 35), conditions: rng.pick(['clear', 'cloudy', 'light rain']) },
        ];
      case 'run_sql':
        return [
          { sql: 'SELECT region, sum(amount) FROM orders GROUP BY region' },
          { row_count: rng.int(0, 5000), elapsed_ms: rng.int(3, 900) },
        ];
      case 'describe_table':
        return [{ table: rng.pick(TABLES) }, { columns: ['id', 'customer_id', 'amount', 'created_at'] }];
      case 'send_email':
        return [
          { to: `${USER_IDS[this.plan.user]}@example.com`, subject: 'Update on your request' },
          { message_id: rng.hex(2), status: 'queued' },
        ];
      case 'lookup_order':
        return [
          { order_id: `ord_${rng.int(10_000, 99_999)}` },
          { status: rng.pick(['processing', 'shipped', 'delivered']) },
        ];
      default: // search_docs, web_search
        return [
          { query: this.text(60), top_k: 5 },
          { results: [`doc_${rng.int(1, 9999)}`, `doc_${rng.int(1, 9999)}`, `doc_${rng.int(1, 9999)}`] },
        ];
    }
  }

  private embedding(parent: string): void {
    const span = this.leaf(parent, 'embed_query', 'embedding', this.rng.logUniform(40, 400));
    const tokens = this.rng.int(6, 60);
    span.model_name = EMBEDDING.name;
    span.input = this.text(tokens * 4);
    span.output = this.rng.chance(0.7) ? null : 'vector(1536)';
    span.input_tokens = tokens;
    span.cost = (tokens * EMBEDDING.inPerM) / 1e6;
  }

  private retriever(parent: string): void {
    const span = this.leaf(parent, 'vector_search', 'retriever', this.rng.logUniform(30, 600));
    span.input = this.rng.chance(0.2) ? null : this.text(80);
    span.output = this.text(this.payloadBytes * 0.5);
    if (this.rng.chance(0.5)) span.metadata = RETRIEVER_META;
  }

  /** One or two failing steps; the agent itself fails half the time (otherwise it recovered). */
  private injectErrors(root: SpanInput): void {
    const rng = this.rng;
    const steps = this.spans.filter((s) => s.kind !== 'agent' && s.kind !== 'chain');
    const failing = [rng.pick(steps)];
    if (rng.chance(0.3)) failing.push(rng.pick(steps));
    for (const span of new Set(failing)) {
      const type = rng.pick(ERROR_TYPES[span.kind as string]);
      Object.assign(span, { status: 'error', error_type: type, error_message: ERROR_MESSAGES[type], output: null });
      if (span.kind === 'llm') Object.assign(span, { output_tokens: 0, cost: 0 }); // a failed call is not billed
    }
    if (rng.chance(0.5)) {
      const cause = failing[0];
      Object.assign(root, {
        status: 'error',
        error_type: cause.error_type,
        error_message: `${root.name} failed: ${cause.error_message}`,
        output: null,
      });
    }
  }

  /** About `length` characters of prose, starting at a sentence when one is near. */
  private text(length: number): string {
    const len = Math.max(1, Math.round(length));
    if (len >= CORPUS.length) return CORPUS.repeat(Math.ceil(len / CORPUS.length) + 1).slice(0, len);
    const maxOff = CORPUS.length - len;
    let off = Math.floor(this.rng.float() * (maxOff + 1));
    const sentence = CORPUS.indexOf('. ', off) + 2;
    if (sentence > 1 && sentence <= maxOff) off = sentence;
    return CORPUS.slice(off, off + len);
  }
}

/**
 * Start time, user, session, environment of every trace, sorted by start. Planned up front because a
 * session (1–6 traces of one user, minutes apart) interleaves with other traffic.
 */
function planTraces(rng: Rng, o: Required<GenerateOptions>): TracePlan[] {
  const plans: TracePlan[] = [];
  const range = o.endMs - o.startMs;
  while (plans.length < o.traces) {
    // 70% of groups are one trace without a session; sessions hold 3.5 traces on average, which leaves
    // about 40% of traces outside a session.
    const hasSession = rng.chance(0.3);
    const size = hasSession ? rng.int(1, 6) : 1;
    const sessionId = hasSession ? `sess_${rng.hex(2)}` : undefined;
    const user = Math.floor(USERS * rng.float() ** 1.5); // a few heavy users, a long tail
    const e = rng.float();
    const environment = e < 0.8 ? 'production' : e < 0.95 ? 'staging' : 'development';
    let t = dailyRhythmTime(rng, o.startMs, range);
    for (let k = 0; k < size && plans.length < o.traces && t < o.endMs; k++) {
      const phase = Math.min(APP_VERSIONS.length - 1, Math.floor((APP_VERSIONS.length * (t - o.startMs)) / range));
      // A rollout is gradual: some clients still run the previous version.
      const appVersion = APP_VERSIONS[Math.max(0, phase - (rng.chance(0.15) ? 1 : 0))];
      plans.push({ start: t, user, sessionId, environment, appVersion });
      t += Math.round(rng.logUniform(20_000, 20 * 60_000));
    }
  }
  return plans.sort((a, b) => a.start - b.start); // stable: ties keep plan order, so output stays deterministic
}

/** Uniform in [start, start + range), thinned so traffic peaks around 15:00 UTC and dips at night. */
function dailyRhythmTime(rng: Rng, start: number, range: number): number {
  for (;;) {
    const t = start + Math.floor(rng.float() * range);
    const hour = (((t % DAY_MS) + DAY_MS) % DAY_MS) / HOUR_MS;
    if (rng.float() < 0.55 + 0.45 * Math.cos((2 * Math.PI * (hour - 15)) / 24)) return t;
  }
}

/** Traces in ascending start order; each trace is its spans (root first, then children by start). */
export function generateTraces(options: GenerateOptions): Generator<SpanInput[]> {
  const o: Required<GenerateOptions> = {
    ...options,
    seed: options.seed ?? 1,
    evaluationShare: options.evaluationShare ?? 0.02,
    errorShare: options.errorShare ?? 0.05,
    payloadBytes: Math.max(0, options.payloadBytes ?? 1200),
  };
  // Checked before the generator starts, so bad options fail at the call and not at the first next().
  if (!Number.isInteger(o.traces) || o.traces < 0) throw new RangeError('traces must be a non-negative integer');
  if (!Number.isSafeInteger(o.startMs) || !Number.isSafeInteger(o.endMs) || o.endMs <= o.startMs) {
    throw new RangeError('startMs and endMs must be whole milliseconds, endMs after startMs');
  }
  if (!(o.evaluationShare >= 0 && o.evaluationShare <= 1 && o.errorShare >= 0 && o.errorShare <= 1)) {
    throw new RangeError('evaluationShare and errorShare must be in [0, 1]');
  }
  return emit(o);
}

function* emit(o: Required<GenerateOptions>): Generator<SpanInput[]> {
  const rng = new Rng(o.seed);
  const builder = new TraceBuilder(rng, o.payloadBytes);
  for (const plan of planTraces(rng, o)) {
    const evaluationDay = rng.chance(o.evaluationShare)
      ? iso(Math.floor(plan.start / DAY_MS) * DAY_MS).slice(0, 10)
      : undefined;
    yield builder.build(plan, evaluationDay, rng.chance(o.errorShare));
  }
}

/** generateTraces, flattened. */
export function generateSpans(options: GenerateOptions): SpanInput[] {
  const spans: SpanInput[] = [];
  for (const trace of generateTraces(options)) for (const span of trace) spans.push(span);
  return spans;
}
