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
  // Not `/[-:@]+$/`: tried at each start of a run of boundaries, that reads the run again each time.
  let end = s.length;
  while (end > 0 && BOUNDARY.has(s[end - 1]!)) end--;
  return s.slice(0, end);
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

type Compiled = { entry: PriceEntry; specificity: number; glob: Glob | null };

/** At most this many model names are remembered per table; past it the memo starts over. */
export const MAX_MEMO_ENTRIES = 10_000;

/**
 * A set of priced patterns, optionally layered over a base table (a project's overrides over the
 * default table). `lookup` memoises by the model name as sent, so a span's work is one Map lookup
 * once a model has been seen.
 */
export class PriceTable {
  private readonly plain = new Map<string, Compiled>();
  /** The longest plain pattern: no prefix of an id longer than it can be one. */
  private longestPlain = 0;
  private readonly globs: Compiled[] = [];
  private readonly memo = new Map<string, PriceEntry | null>();

  constructor(
    entries: readonly PriceEntry[],
    private readonly base: PriceTable | null = null,
  ) {
    for (const entry of entries) {
      const canonical = canonicalModel(entry.model_pattern);
      if (canonical.includes('*')) {
        const glob = new Glob(canonical);
        this.globs.push({ entry, specificity: glob.literalLength, glob });
      } else if (canonical !== '' && !this.plain.has(canonical)) {
        // Two patterns with one canonical form: the first listed wins (the service refuses such pairs).
        this.plain.set(canonical, { entry, specificity: canonical.length, glob: null });
        this.longestPlain = Math.max(this.longestPlain, canonical.length);
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
    // Only prefixes up to the longest pattern: each is hashed, so a long id of many boundaries would
    // otherwise hash its own length squared.
    for (let end = Math.min(canonical.length, this.longestPlain); end > 0; end--) {
      if (end < canonical.length && !BOUNDARY.has(canonical[end]!)) continue;
      const hit = this.plain.get(canonical.slice(0, end));
      if (hit) {
        best = hit;
        break;
      }
    }
    for (const g of this.globs) if ((!best || g.specificity > best.specificity) && g.glob!.test(canonical)) best = g;
    const under = this.base?.best(canonical) ?? null;
    // This layer wins ties with the base: a project's override beats the default at equal specificity.
    return under && (!best || under.specificity > best.specificity) ? under : best;
  }
}

/**
 * A `*` pattern, matched in time linear in the model id and the pattern (docs/limits.md, "Bounded by
 * cost"). It used to become a RegExp (`^a.*a.*b$`), which backtracks exponentially on an id that nearly
 * matches: one tenant's pattern held the event loop, and so every tenant, for minutes. Here the
 * pattern's first piece must start the id, its last piece end it, and the pieces between are found
 * left to right, each at its earliest place after the one before: for `*` alone, the earliest place
 * is never worse than a later one, so no choice is ever revisited. Each piece is found with the
 * engine's `indexOf` (a Boyer-Moore search: linear for a first occurrence, and several times faster
 * here than a search of ours), and a search resumes where the previous piece ended.
 */
export class Glob {
  private readonly head: string;
  private readonly tail: string;
  private readonly middle: string[];
  /** The pattern's characters besides `*`: the least length of an id it matches, and its specificity. */
  readonly literalLength: number;

  constructor(pattern: string) {
    const pieces = pattern.split('*');
    if (pieces.length === 1) throw new Error('a glob holds at least one *');
    this.head = pieces[0]!;
    this.tail = pieces[pieces.length - 1]!;
    this.middle = pieces.slice(1, -1).filter((p) => p !== '');
    this.literalLength = pieces.reduce((n, p) => n + p.length, 0);
  }

  test(id: string): boolean {
    if (id.length < this.literalLength || !id.startsWith(this.head) || !id.endsWith(this.tail)) return false;
    let from = this.head.length;
    const end = id.length - this.tail.length;
    for (const piece of this.middle) {
      const at = id.indexOf(piece, from);
      // The first place is the earliest: if it runs into the tail, no place fits.
      if (at < 0 || at + piece.length > end) return false;
      from = at + piece.length;
    }
    return true;
  }
}
