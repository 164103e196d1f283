import type { ScenarioResult, Target } from '../support/scenario.js';

export type Library = 'vercel-ai' | 'openinference-openai' | 'traceloop' | 'langfuse' | 'otel-genai';

/**
 * Each library's scenario, loaded on demand: importing one library must not load the others, since
 * several patch `openai` or install global providers when loaded.
 */
export const SCENARIOS: Record<Library, (target: Target) => Promise<ScenarioResult>> = {
  'vercel-ai': async (t) => (await import('./vercel-ai.js')).runVercelAi(t),
  'openinference-openai': async (t) => (await import('./openinference-openai.js')).runOpenInference(t),
  traceloop: async (t) => (await import('./traceloop.js')).runTraceloop(t),
  langfuse: async (t) => (await import('./langfuse.js')).runLangfuse(t),
  'otel-genai': async (t) => (await import('./otel-genai.js')).runOtelGenAi(t),
};
