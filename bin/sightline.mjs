#!/usr/bin/env node
// The `sightline` command (package.json "bin"). The CLI is TypeScript, run through tsx like the server.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv);
