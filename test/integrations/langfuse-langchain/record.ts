// Records what langfuse-langchain sends (issue 32: "recorded fixtures of what each sent") into
// test/fixtures/protocols/langfuse-langchain.json, against the loopback stub of
// test/fixtures/protocols/record.ts. It lives in this folder so that Node finds LangChain 0.3 here.
//
//   npx tsx test/integrations/langfuse-langchain/record.ts
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stub, writeFixture } from '../../fixtures/protocols/record.js';
import { runLangfuseLangchain } from './scenario.js';

async function main(): Promise<void> {
  const s = await stub();
  const { traceId } = await runLangfuseLangchain({ origin: s.origin, apiKey: 'sl_fixture' });
  await s.close();
  writeFixture('langfuse-langchain.json', {
    sdk: 'langfuse-langchain 3.39.2, @langchain/core 0.3.80',
    trace_id: traceId,
    requests: s.requests,
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
