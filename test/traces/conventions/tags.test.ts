import { describe, expect, it } from 'vitest';
import { mapOne } from './support.js';

/** Tags over OTLP (conventions/tags.ts): each convention's tag attribute, as an array or JSON text. */

describe('tags from the conventions', () => {
  it("reads Langfuse's langfuse.trace.tags as the span's tags, out of metadata", () => {
    const span = mapOne({ 'langfuse.trace.tags': ['travel', 'beta', 'travel'] });
    expect(span.tags).toEqual(['travel', 'beta']);
    expect(span.attributes?.['langfuse.trace.tags']).toBeUndefined();
  });

  it("reads the Vercel AI SDK's metadata.tags and sightline.tags, first one present winning", () => {
    const vercel = mapOne({ 'ai.telemetry.metadata.tags': ['a', 'b'], 'ai.telemetry.metadata.tenant': 'acme' });
    expect(vercel.tags).toEqual(['a', 'b']);
    expect(vercel.metadata).toEqual({ tenant: 'acme' });
    expect(mapOne({ 'sightline.tags': '["x", "y"]', 'langfuse.trace.tags': ['z'] }).tags).toEqual(['x', 'y']);
  });

  it('leaves out what is no tag, and a value that is no list stays in attributes', () => {
    expect(mapOne({ 'sightline.tags': '["ok", "", 3, "  "]' }).tags).toEqual(['ok']);
    const plain = mapOne({ 'sightline.tags': 'not-a-list' });
    expect(plain.tags).toBeUndefined();
    expect(plain.attributes?.['sightline.tags']).toBe('not-a-list');
  });
});
