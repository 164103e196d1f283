-- The prompt version a span used (issue 34; docs/prompts.md, "Linking spans"): `prompt_name` and
-- `prompt_version` from the native fields or the producers' conventions (Langfuse's
-- `langfuse.observation.prompt.*`, Traceloop's `traceloop.prompt.*`, OpenInference's `prompt.id` and
-- `llm.prompt_template.version`; src/traces/conventions/precedence.ts). Added at the end of `spans`
-- like 0007's fields, so the views naming their columns go on as before and stored spans read the
-- defaults: '' and 0 both mean "no prompt". A project has few prompt names: LowCardinality.
ALTER TABLE spans
    ADD COLUMN IF NOT EXISTS prompt_name LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS prompt_version UInt32 DEFAULT 0;
