import { Payload } from '../../components/payload';
import type { TraceDetail } from '../../types';

/**
 * The trace a reviewer judges: its root input and output. One small wrapper, so the conversation
 * renderer (web/src/components/conversation.tsx, another branch) can take its place in one edit.
 * Text only: React escapes it; nothing is parsed as HTML.
 */
export function ReviewTraceView({ trace }: { trace: TraceDetail }) {
  return (
    <div className="stack" data-testid="review-trace">
      <section>
        <h3>Input</h3>
        <Payload text={trace.input} label="Input" />
      </section>
      <section>
        <h3>Output</h3>
        <Payload text={trace.output} label="Output" />
      </section>
    </div>
  );
}
