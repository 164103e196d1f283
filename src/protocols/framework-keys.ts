/**
 * Metadata keys a framework adds about a run or span itself, not the user's metadata: they become the
 * span's attributes (docs/traces.md, "Metadata and attributes"), whichever protocol brought them.
 */

/**
 * What LangChain and LangGraph add to a run's metadata (`ls_provider`, `ls_model_name`,
 * `langgraph_node`, `langgraph_step`, `checkpoint_ns`): in LangSmith runs' `extra.metadata`, and in the
 * metadata of langfuse-langchain's observations.
 */
export function isLangChainKey(key: string): boolean {
  return key.startsWith('ls_') || key.startsWith('langgraph_') || key === 'checkpoint_ns';
}

/**
 * The Vercel AI SDK attributes langfuse-vercel copies into an observation's metadata (and, merged, into
 * its trace's), beside the user's `ai.telemetry.metadata.*`.
 */
const VERCEL_KEYS: ReadonlySet<string> = new Set([
  'ai.toolCall.id',
  'ai.prompt.format',
  'ai.schema',
  'ai.settings.maxToolRoundtrips',
]);

export function isFrameworkKey(key: string): boolean {
  return isLangChainKey(key) || VERCEL_KEYS.has(key);
}
