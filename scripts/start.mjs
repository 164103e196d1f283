// `npm start` and the start:* scripts: `node scripts/start.mjs <all|api|web|worker>`. Runs the
// bundled server (dist/server/main.js, rebuilt first when a source changed: scripts/build-server.mjs) in
// this same process, so signals reach the server directly; falls back to the TypeScript sources
// through tsx when the bundle can't be built. SIGHTLINE_FROM_SOURCE=1 always starts from the sources.
import { pathToFileURL } from 'node:url';
import { buildServer } from './build-server.mjs';

const fromSource = process.env.SIGHTLINE_FROM_SOURCE === '1' || process.env.SIGHTLINE_FROM_SOURCE === 'true';
let bundle = null;
if (!fromSource) {
  try {
    bundle = await buildServer();
  } catch (error) {
    process.stderr.write(
      `Could not build dist/server/main.js (${error instanceof Error ? error.message.split('\n')[0] : error}); starting from the TypeScript sources\n`,
    );
  }
}
if (bundle) {
  await import(pathToFileURL(bundle).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
