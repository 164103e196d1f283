import { useMemo, useState } from 'react';
import ReactMarkdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { markRanges } from './highlight';

/**
 * Message text as markdown, rendered safely (docs/trace-view.md): no raw HTML (react-markdown without
 * rehype-raw shows it as text), links only to http(s) and mailto, opened apart from this page
 * (rel=noopener noreferrer), and no image loaded until the reader asks for it. A text search's terms
 * are marked in the rendered text as `highlight` marks them elsewhere.
 */

type HastNode = {
  type: string;
  tagName?: string;
  value?: string;
  properties?: Record<string, unknown>;
  children?: HastNode[];
};

/** A rehype plugin: each text node split around the terms, the matches wrapped in <mark>. */
function rehypeMarks(terms: string[]) {
  const walk = (node: HastNode): void => {
    if (!node.children) return;
    node.children = node.children.flatMap((child): HastNode[] => {
      // Raw HTML is shown as its text (react-markdown would do the same after the plugins).
      if (child.type === 'raw') child = { type: 'text', value: child.value ?? '' };
      if (child.type !== 'text') {
        walk(child);
        return [child];
      }
      const text = child.value ?? '';
      const ranges = markRanges(text, terms);
      if (!ranges.length) return [child];
      const out: HastNode[] = [];
      let pos = 0;
      for (const [from, to] of ranges) {
        if (from > pos) out.push({ type: 'text', value: text.slice(pos, from) });
        out.push({
          type: 'element',
          tagName: 'mark',
          properties: {},
          children: [{ type: 'text', value: text.slice(from, to) }],
        });
        pos = to;
      }
      if (pos < text.length) out.push({ type: 'text', value: text.slice(pos) });
      return out;
    });
  };
  return () => (tree: HastNode) => {
    if (terms.length) walk(tree);
  };
}

/**
 * Only http(s) and mailto are links, and data: images are image sources; anything else (javascript:,
 * data: documents, relative paths into this application) loses its address.
 */
export function safeUrl(url: string, key?: string): string {
  const u = url.trim();
  if (/^(https?:\/\/|mailto:)/i.test(u)) return u;
  if (key === 'src' && /^data:image\//i.test(u)) return u;
  return '';
}

/** An image is a button until clicked: a data: image then shows, a remote one gets a link to open it. */
export function ImageRef({ src, alt }: { src: string; alt?: string }) {
  const [open, setOpen] = useState(false);
  const inline = /^data:image\//i.test(src);
  const remote = /^https?:\/\//i.test(src);
  if (!open)
    return (
      <button
        type="button"
        className="small image-ref"
        data-testid="load-image"
        title={inline ? 'An image sent inline' : src}
        onClick={() => setOpen(true)}
      >
        Load image{alt ? `: ${alt}` : ''}
      </button>
    );
  if (inline) return <img className="message-image" src={src} alt={alt ?? 'image'} />;
  if (remote)
    // The page's Content-Security-Policy loads no image from elsewhere: it opens in a tab of its own.
    return (
      <a href={src} target="_blank" rel="noopener noreferrer">
        Open image{alt ? `: ${alt}` : ''} ↗
      </a>
    );
  return <span className="mono">{src}</span>;
}

const COMPONENTS: Components = {
  a: ({ href, children }) =>
    href ? (
      <a href={href} target="_blank" rel="noopener noreferrer">
        {children}
      </a>
    ) : (
      <span className="unsafe-link">{children}</span>
    ),
  img: ({ src, alt }) => (typeof src === 'string' && src ? <ImageRef src={src} alt={alt} /> : null),
};

export function Markdown({ text, terms = [] }: { text: string; terms?: string[] }) {
  const rehypePlugins = useMemo(() => [rehypeMarks(terms)], [terms]);
  return (
    <div className="markdown">
      <ReactMarkdown
        remarkPlugins={[remarkGfm]}
        rehypePlugins={rehypePlugins}
        urlTransform={safeUrl}
        components={COMPONENTS}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
}
