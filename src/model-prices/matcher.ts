/**
 * Which price applies to a span's model (docs/model-prices.md, "Matching"). Pure: no I/O.
 *
 * Model ids and patterns are compared in canonical form (`canonicalModel`), and a pattern matches a
 * model when the two are equal or the model continues the pattern after a version boundary (`-`, `:`
 * or `@`): `gpt-4o` matches `gpt-4o-2024-08-06`, `gpt-4o:free` and `gpt-4o-audio-preview`, never
 * `gpt-4omni`. That one rule covers the date and version suffixes producers add (`-20241022`,
 * `@20241022`, `-v2:0`, `-latest`, `-002`) without a list of suffix shapes to keep up to date. A
 * pattern may hold `*` (any characters, the whole canonical id must match). Of the matching patterns
 * the most specific wins: the one with the most characters besides `*`; on a tie the project's
 * override beats the default table, and a plain pattern beats a `*` pattern.
 */

/** Bedrock cross-region inference profiles (`us.`, `eu.`, …) put a region before the vendor. */
const BEDROCK_REGION = /^(?:us|eu|apac|us-gov|global|jp|au|ca)\.(?=[a-z0-9-]+\.)/;
/** Bedrock's vendor prefix (`anthropic.claude-…`, `meta.llama3-…`, `amazon.nova-…`). */
const BEDROCK_VENDOR = /^(?:anthropic|meta|mistral|amazon|cohere|ai21|deepseek|openai|qwen|writer)\./;
const BOUNDARY = new Set(['-', ':', '@']);

/**
 * The canonical form of a model id or pattern: lower case; everything up to the last `/` dropped
 * (`openai/`, `models/`, `vertex_ai/`, `accounts/fireworks/models/`, `meta-llama/`, `azure/`, ARNs);
 * Bedrock's region and vendor prefixes dropped; `.`, `_` and blanks read as `-` (`gpt-4.1` =
 * `gpt-4-1`, `claude-3.5-sonnet` = `claude-3-5-sonnet`); Azure's `gpt-35-turbo` and deployment
 * spellings like `gpt4o` read as OpenAI's (`gpt-3-5-turbo`, `gpt-4o`); trailing boundaries dropped.
 */
export function canonicalModel(id: string): string {
  let s = id.trim().toLowerCase();
  const slash = s.lastIndexOf('/');
  if (slash >= 0) s = s.slice(slash + 1);
  s = s.replace(BEDROCK_REGION, '').replace(BEDROCK_VENDOR, '');
  s = s.replace(/[._\s]+/g, '-');
  s = s.replace(/^gpt(?=\d)/, 'gpt-').replace(/^gpt-35(?=-|$)/, 'gpt-3-5');
  return s.replace(/[-:@]+$/, '');
}

export type PriceSource = 'default' | 'project';

/** Per-million prices; a null price falls back (pricing.ts, `costOf`). */
export type Prices = {
  input_per_million: number;
  output_per_million: number;
  cached_input_per_million: number | null;
  cache_write_per_million: number | null;
  reasoning_per_million: number | null;
};

export type PriceEntry = Prices & { model_pattern: string; source: PriceSource; id: string | null };

type Compiled = { entry: PriceEntry; specificity: number; glob: RegExp | null };

/** At most this many model names are remembered per table; past it the memo starts over. */
export const MAX_MEMO_ENTRIES = 10_000;

/**
 * A set of priced patterns, optionally layered over a base table (a project's overrides over the
 * default table). `lookup` memoises by the model name as sent, so a span's work is one Map lookup
 * once a model has been seen.
 */
export class PriceTable {
  private readonly plain = new Map<string, Compiled>();
  private readonly globs: Compiled[] = [];
  private readonly memo = new Map<string, PriceEntry | null>();

  constructor(
    entries: readonly PriceEntry[],
    private readonly base: PriceTable | null = null,
  ) {
    for (const entry of entries) {
      const canonical = canonicalModel(entry.model_pattern);
      if (canonical.includes('*')) {
        const literal = canonical.replace(/\*/g, '');
        const source = canonical.split('*').map(escapeRegExp).join('.*');
        this.globs.push({ entry, specificity: literal.length, glob: new RegExp(`^${source}$`) });
      } else if (canonical !== '' && !this.plain.has(canonical)) {
        // Two patterns with one canonical form: the first listed wins (the service refuses such pairs).
        this.plain.set(canonical, { entry, specificity: canonical.length, glob: null });
      }
    }
  }

  /** The entry that prices `model`, or null when none matches. */
  lookup(model: string): PriceEntry | null {
    const known = this.memo.get(model);
    if (known !== undefined) return known;
    const found = this.best(canonicalModel(model))?.entry ?? null;
    if (this.memo.size >= MAX_MEMO_ENTRIES) this.memo.clear();
    this.memo.set(model, found);
    return found;
  }

  private best(canonical: string): Compiled | null {
    if (canonical === '') return null;
    let best: Compiled | null = null;
    // The longest plain pattern that is the whole id or ends at a boundary of it.
    for (let end = canonical.length; end > 0; end--) {
      if (end < canonical.length && !BOUNDARY.has(canonical[end]!)) continue;
      const hit = this.plain.get(canonical.slice(0, end));
      if (hit) {
        best = hit;
        break;
      }
    }
    for (const g of this.globs) if (g.glob!.test(canonical) && (!best || g.specificity > best.specificity)) best = g;
    const under = this.base?.best(canonical) ?? null;
    // This layer wins ties with the base: a project's override beats the default at equal specificity.
    return under && (!best || under.specificity > best.specificity) ? under : best;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
