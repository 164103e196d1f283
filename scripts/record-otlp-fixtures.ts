// Records what each instrumentation library really sends over OTLP (test/fixtures/otlp/README.md):
// runs the integration scenario of each library (test/integrations/scenarios/) against a fake
// OpenAI-compatible provider and a capturing OTLP receiver, both on 127.0.0.1, and writes the bodies
// as one OTLP JSON ExportTraceServiceRequest per library. Each library runs in its own process, since
// they install global tracer providers and patch `openai`.
//
//   node --import tsx scripts/record-otlp-fixtures.ts            # all five
//   node --import tsx scripts/record-otlp-fixtures.ts langfuse   # one
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeOpenAi } from '../test/integrations/support/fake-openai.js';
import { startOtlpCapture, toOtlpJson } from '../test/integrations/support/otlp-capture.js';
import { SCENARIOS, type Library } from '../test/integrations/scenarios/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(root, 'test', 'fixtures', 'otlp');

async function recordOne(library: Library): Promise<void> {
  const provider = await startFakeOpenAi();
  const capture = await startOtlpCapture();
  try {
    const { traceId } = await SCENARIOS[library]({
      origin: capture.origin,
      apiKey: 'sl_fixture_not_a_real_key',
      openaiBaseUrl: provider.baseUrl,
    });
    const resourceSpans = capture.requests.flatMap((r) => toOtlpJson(r).resourceSpans).map(withoutMachineId);
    writeFileSync(path.join(outDir, `${library}.json`), `${JSON.stringify({ resourceSpans }, null, 2)}\n`);
    const seen = capture.requests.map((r) => `${r.path} ${r.contentType} auth=${r.authScheme}`);
    const spans = JSON.stringify(resourceSpans).match(/"spanId"/g)?.length ?? 0;
    process.stdout.write(
      `${library}: trace ${traceId}, ${capture.requests.length} request(s), ~${spans} spans: ${[...new Set(seen)].join('; ')}\n`,
    );
  } finally {
    await capture.close();
    await provider.close();
  }
}

/** The recording machine's id (`host.id`, Traceloop's resource detectors) is not kept. */
function withoutMachineId(resourceSpan: unknown): unknown {
  const attributes =
    (resourceSpan as { resource?: { attributes?: { key: string; value: Record<string, unknown> }[] } }).resource
      ?.attributes ?? [];
  for (const a of attributes) if (a.key === 'host.id') a.value = { stringValue: 'recorded-host-id' };
  return resourceSpan;
}

const only = process.argv[2] as Library | undefined;
if (only) {
  if (!(only in SCENARIOS)) throw new Error(`unknown library ${only}; one of ${Object.keys(SCENARIOS).join(', ')}`);
  await recordOne(only);
  // Some SDKs keep timers (batch processors, metric readers) alive after the scenario.
  process.exit(0);
} else {
  for (const library of Object.keys(SCENARIOS)) {
    const run = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), library], {
      cwd: root,
      stdio: 'inherit',
    });
    if (run.status !== 0) process.exit(run.status ?? 1);
  }
}
