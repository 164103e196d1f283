import type { Command, Option } from 'commander';
import { projectQuery } from './client.js';
import { CliError } from './errors.js';
import { render, rowsOf, type Format } from './format.js';
import type { Context } from './context.js';
import type { AnswerOf } from '../answer-schemas.js';
import type { SpanAnswer } from '../traces/answers.js';

/**
 * `sightline traces list|get`. The list's flags map one to one onto the list's parameters and the
 * predicate table (docs/filters.md); --filter passes raw predicates for the rest.
 */

type ListOptions = {
  limit: string;
  page: string;
  since?: string;
  until?: string;
  name?: string;
  user?: string;
  search?: string;
  evaluations?: boolean;
  model: string[];
  env: string[];
  kind: string[];
  status: string[];
  errorType: string[];
  spanName: string[];
  traceId?: string;
  signal?: string;
  metadata: string[];
  cost?: string;
  tokens?: string;
  duration?: string;
  errors?: string;
  filter: string[];
  format: Format;
};

const collect = (value: string, previous: string[]) => [...previous, value];
const NUMERIC = /^(eq|gt|gte|lt|lte):(-?\d+(\.\d+)?)$/;

/** `gt:0.5` → {op: 'gt', value: 0.5}. */
function numeric(field: string, spec: string | undefined): Record<string, unknown>[] {
  if (spec === undefined) return [];
  const m = NUMERIC.exec(spec);
  if (!m)
    throw new CliError(
      `--${field.replace('_', '-')} takes OP:NUMBER with OP one of eq, gt, gte, lt, lte (e.g. gt:0.5)`,
    );
  return [{ field, op: m[1], value: Number(m[2]) }];
}

export function listFilters(o: ListOptions): Record<string, unknown>[] {
  const sets: [string, string[]][] = [
    ['model_name', o.model],
    ['environment', o.env],
    ['span_kind', o.kind],
    ['status', o.status],
    ['error_type', o.errorType],
    ['name', o.spanName],
  ];
  const filters: Record<string, unknown>[] = sets
    .filter(([, v]) => v.length)
    .map(([field, value]) => ({ field, op: 'in', value }));
  if (o.traceId)
    filters.push({
      field: 'trace_id',
      op: o.traceId.startsWith('~') ? 'contains' : 'eq',
      value: o.traceId.replace(/^~/, ''),
    });
  if (o.signal) filters.push({ field: 'signal_id', op: 'eq', value: o.signal });
  for (const m of o.metadata) {
    const match = /^([^=~]+)(=|~)(.+)$/.exec(m);
    if (!match) throw new CliError('--metadata takes KEY=VALUE (equals) or KEY~VALUE (contains)');
    filters.push({ field: 'metadata', key: match[1], op: match[2] === '=' ? 'eq' : 'contains', value: match[3] });
  }
  filters.push(
    ...numeric('cost', o.cost),
    ...numeric('total_tokens', o.tokens),
    ...numeric('duration_ms', o.duration),
    ...numeric('errors', o.errors),
  );
  for (const raw of o.filter) {
    try {
      filters.push(JSON.parse(raw) as Record<string, unknown>);
    } catch {
      throw new CliError(`--filter takes one predicate as JSON, e.g. '{"field":"cost","op":"gt","value":0}'`);
    }
  }
  return filters;
}

/** docs/cli.md: the footer counts pages from 1; `--page` stays the API's 0-based page. */
export function pageFooter(meta: { page: number; limit: number; total: number }): string {
  const pages = Math.max(1, Math.ceil(meta.total / meta.limit));
  const next = meta.page + 1 < pages ? `; next: --page ${meta.page + 1}` : '';
  return `page ${meta.page + 1} of ${pages} (${meta.total} trace${meta.total === 1 ? '' : 's'}${next})`;
}

const AGE = /^(\d+)\s*(m|min|h|d|w)$/i;
const AGE_MS: Record<string, number> = { m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const ISO = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([zZ]|[+-]\d{2}:?\d{2})?)?$/;

/** `--since 7d` → the ISO time 7 days ago; ISO 8601 passes through; anything else is a one-line hint. */
export function timeFlag(flag: string, value: string | undefined, now = Date.now()): string | undefined {
  if (value === undefined) return undefined;
  const age = AGE.exec(value.trim());
  if (age) return new Date(now - Number(age[1]) * AGE_MS[age[2]!.toLowerCase()]!).toISOString();
  if (ISO.test(value.trim()) && !Number.isNaN(Date.parse(value.trim().replace(' ', 'T'))))
    return value.trim().replace(' ', 'T');
  throw new CliError(
    `--${flag} takes an ISO 8601 time (2026-11-01 or 2026-11-01T09:00:00Z) or an age (30m, 6h, 7d, 2w), not '${value}'`,
  );
}

/** What the tree draws of each span of `GET /traces/{trace_id}` (its answer shape: src/traces/answers.ts). */
type TreeSpan = Pick<
  AnswerOf<typeof SpanAnswer>,
  | 'span_id'
  | 'parent_span_id'
  | 'name'
  | 'kind'
  | 'status'
  | 'start_time'
  | 'duration_ms'
  | 'model_name'
  | 'input_tokens'
  | 'output_tokens'
  | 'cost'
>;

/**
 * The spans as an indented tree (children under their parent, by start time), each with its offset
 * from the trace's start, duration, and where present model, tokens, cost and an error mark.
 */
export function spanTree(spans: TreeSpan[]): string {
  if (spans.length === 0) return '(no spans)';
  const ids = new Set(spans.map((s) => s.span_id));
  const children = new Map<string, TreeSpan[]>();
  const roots: TreeSpan[] = [];
  for (const s of spans) {
    if (s.parent_span_id && ids.has(s.parent_span_id) && s.parent_span_id !== s.span_id) {
      const list = children.get(s.parent_span_id) ?? [];
      list.push(s);
      children.set(s.parent_span_id, list);
    } else roots.push(s);
  }
  const t0 = Math.min(...spans.map((s) => Date.parse(s.start_time)));
  const lines: string[] = [];
  const seen = new Set<string>();
  const walk = (s: TreeSpan, prefix: string, last: boolean, top: boolean) => {
    if (seen.has(s.span_id)) return;
    seen.add(s.span_id);
    const branch = top ? '' : last ? '└─ ' : '├─ ';
    const facts = [
      `+${Date.parse(s.start_time) - t0} ms`,
      s.duration_ms === null ? 'running' : `${s.duration_ms} ms`,
      s.model_name ? s.model_name : '',
      s.input_tokens || s.output_tokens ? `${s.input_tokens}→${s.output_tokens} tok` : '',
      s.cost ? `$${s.cost}` : '',
      s.status === 'error' ? 'ERROR' : '',
    ].filter(Boolean);
    lines.push(`${prefix}${branch}${s.name} [${s.kind}]  ${facts.join('  ')}`);
    const kids = children.get(s.span_id) ?? [];
    kids.forEach((k, i) => walk(k, top ? '' : prefix + (last ? '   ' : '│  '), i === kids.length - 1, false));
  };
  roots.forEach((r) => walk(r, '', true, true));
  return lines.join('\n');
}

export function registerTraceCommands(program: Command, ctx: Context, formatOption: () => Option): void {
  const traces = program.command('traces').description('list and read traces');
  traces
    .command('list')
    .description('the newest traces first, filtered')
    .option('--limit <n>', 'per page, 1 to 200', '50')
    .option('--page <n>', '0-based page', '0')
    .option(
      '--since <time>',
      'traces started at or after: ISO 8601 (2026-11-01, 2026-11-01T09:00:00Z) or an age (30m, 6h, 7d, 2w)',
    )
    .option('--until <time>', 'traces started before: ISO 8601 or an age, as --since')
    .option('--name <text>', 'trace name contains')
    .option('--user <user-id>')
    .option('--search <text>', 'across trace id, name, session and user')
    .option('--evaluations', 'include offline-evaluation traces')
    .option('--model <name>', 'model name (repeatable)', collect, [])
    .option('--env <name>', 'environment (repeatable)', collect, [])
    .option('--kind <kind>', 'span kind (repeatable)', collect, [])
    .option('--status <status>', 'span status (repeatable)', collect, [])
    .option('--error-type <type>', 'error type (repeatable)', collect, [])
    .option('--span-name <name>', 'span name (repeatable)', collect, [])
    .option('--trace-id <id>', 'trace id; ~text for contains')
    .option('--signal <signal-id>')
    .option('--metadata <key=value|key~value>', 'metadata equals or contains (repeatable)', collect, [])
    .option('--cost <op:value>', 'e.g. gt:0.01')
    .option('--tokens <op:value>', 'total tokens, e.g. gte:1000')
    .option('--duration <op:value>', 'milliseconds, e.g. gt:2000')
    .option('--errors <op:value>', 'error spans, e.g. gt:0')
    .option('--filter <json>', 'a raw predicate (repeatable)', collect, [])
    .addOption(formatOption())
    .action(async (o: ListOptions) => {
      const api = ctx.api();
      const filters = listFilters(o);
      const query = {
        ...(await projectQuery(api, ctx.globals(), ctx.io.env)),
        limit: o.limit,
        page: o.page,
        start_after: timeFlag('since', o.since),
        end_before: timeFlag('until', o.until),
        name: o.name,
        user_id: o.user,
        search_query: o.search,
        include_evaluations: o.evaluations ? true : undefined,
        filters: filters.length ? JSON.stringify(filters) : undefined,
      };
      const answer = (await api.call('GET', '/traces', { query })) as {
        data: Record<string, unknown>[];
        meta: { page: number; limit: number; total: number };
      };
      const keys = [
        'trace_start_time',
        'trace_id',
        'name',
        'span_count',
        'error_count',
        'duration_ms',
        'total_cost',
        'user_id',
      ];
      ctx.io.out(render(o.format, keys, rowsOf(answer.data, keys), answer));
      if (o.format === 'table') ctx.io.err(pageFooter(answer.meta));
    });

  traces
    .command('get')
    .description('one trace with its spans')
    .argument('<trace-id>')
    .addOption(formatOption())
    .action(async (id: string, o: { format: Format }) => {
      const api = ctx.api();
      const trace = (await api.call('GET', `/traces/${encodeURIComponent(id)}`, {
        query: await projectQuery(api, ctx.globals(), ctx.io.env),
      })) as Record<string, unknown> & {
        spans: Record<string, unknown>[];
      };
      if (o.format === 'json') return ctx.io.out(JSON.stringify(trace, null, 2));
      const keys = ['start_time', 'span_id', 'parent_span_id', 'name', 'kind', 'status', 'model_name', 'cost'];
      if (o.format === 'csv') return ctx.io.out(render('csv', keys, rowsOf(trace.spans, keys), trace));
      ctx.io.out(
        `${String(trace.name)}  ${String(trace.trace_id)}\n${trace.span_count} spans, ${trace.error_count} errors, ${trace.duration_ms ?? '?'} ms, cost ${trace.total_cost}\n${String(trace.trace_url)}\n`,
      );
      ctx.io.out(spanTree(trace.spans as unknown as TreeSpan[]));
    });
}
