// Runs `npm ci` when node_modules is missing or older than package-lock.json, so that `npm start`,
// `npm test` and `npm run lint` work on a fresh clone. Node built-ins only: nothing is installed yet when it runs.
import { existsSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// An argument names another package of the repository to install (`tools/lint`, the lint tools;
// `test/integrations/langfuse-langchain`, LangChain 0.3 for langfuse-langchain's test).
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', process.argv[2] ?? '.');
const lock = path.join(root, 'package-lock.json');
// npm writes this file on every install, so its age is the age of the install.
const marker = path.join(root, 'node_modules', '.package-lock.json');

const stale = !existsSync(marker) || (existsSync(lock) && statSync(marker).mtimeMs < statSync(lock).mtimeMs);
if (stale) {
  process.stdout.write('Installing dependencies (npm ci)...\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
