#!/usr/bin/env node
// The `sightline` command (package.json "bin"). Runs the bundled CLI (dist/cli/main.js, rebuilt first when
// a source changed: scripts/build-cli.mjs); falls back to the TypeScript sources through tsx when the
// bundle can't be built.
import { pathToFileURL } from 'node:url';
import { cliBundle } from '../scripts/build-cli.mjs';

let bundle = null;
try {
  bundle = await cliBundle();
} catch {
  bundle = null;
}
let main;
if (bundle) {
  ({ main } = await import(pathToFileURL(bundle).href));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
process.exitCode = await main(process.argv);
