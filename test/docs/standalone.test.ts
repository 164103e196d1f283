import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The repository stands alone: its users have only what is in it. No file may point at documents
 * kept outside it (the planning folder beside the checkout and the documents it held), and every
 * relative link of the README and of docs/ must lead to a file (and heading) that exists.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// Assembled from parts so that this file does not match itself.
const OUTSIDE_REFERENCES = [
  ['..', '/shared'],
  ['public-api', '.md'],
  ['extensions', '.md'],
  ['DESIGN', '.md'],
  ['STYLE', '.md'],
].map((p) => p.join(''));

/** Tracked files, and new files git would pick up (not ignored), outside node_modules. */
function repositoryFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  return [...new Set(out.toString('utf8').split('\0'))]
    .filter((f) => f !== '' && !f.split('/').includes('node_modules'))
    .filter((f) => fs.existsSync(path.join(ROOT, f)) && fs.statSync(path.join(ROOT, f)).isFile());
}

function markdownFiles(): string[] {
  const docs = fs.existsSync(path.join(ROOT, 'docs'))
    ? fs
        .readdirSync(path.join(ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`)
    : [];
  return ['README.md', ...docs];
}

function withoutFences(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** The text outside fenced code blocks and inline code, where a `[text](target)` is a link. */
function prose(markdown: string): string {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(markdown).split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

function relativeLinks(markdown: string): string[] {
  const links: string[] = [];
  for (const m of prose(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    links.push(target);
  }
  return links;
}

describe('the repository stands alone', () => {
  it('mentions no document kept outside the repository', () => {
    const offenders: string[] = [];
    for (const file of repositoryFiles()) {
      const text = fs.readFileSync(path.join(ROOT, file));
      for (const reference of OUTSIDE_REFERENCES) {
        if (text.includes(reference)) offenders.push(`${file}: ${reference}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('has a docs/ folder with an index the README links to', () => {
    expect(fs.existsSync(path.join(ROOT, 'docs/README.md'))).toBe(true);
    expect(relativeLinks(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'))).toContain('docs/README.md');
  });

  it('links only to files and headings that exist (README.md and docs/*.md)', () => {
    const broken: string[] = [];
    for (const file of markdownFiles()) {
      const markdown = fs.readFileSync(path.join(ROOT, file), 'utf8');
      for (const link of relativeLinks(markdown)) {
        const [target, anchor] = link.split('#', 2) as [string, string | undefined];
        const resolved =
          target === ''
            ? path.join(ROOT, file)
            : path.resolve(path.dirname(path.join(ROOT, file)), decodeURIComponent(target));
        if (!resolved.startsWith(ROOT) || !fs.existsSync(resolved)) {
          broken.push(`${file}: ${link} (no such file)`);
          continue;
        }
        if (anchor && resolved.endsWith('.md') && !anchorsOf(fs.readFileSync(resolved, 'utf8')).has(anchor)) {
          broken.push(`${file}: ${link} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
