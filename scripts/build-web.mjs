// Builds the browser application (web/, vite) into web/dist when its sources are newer than the last
// build, so `npm start` costs nothing when nothing changed; `--force` always builds.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const web = path.join(root, 'web');
const stamp = path.join(web, 'dist', '.build-stamp');

function newest(entry) {
  const stat = fs.statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...fs.readdirSync(entry).map((name) => newest(path.join(entry, name))));
}

const inputs = [
  path.join(web, 'src'),
  path.join(web, 'index.html'),
  path.join(web, 'vite.config.ts'),
  // The server's modules the web app imports: the pure word lists it shares with the server's contract
  // (widget spec, aggregations, span, alert and signal statuses).
  path.join(root, 'src', 'widgets', 'vocabulary.ts'),
  path.join(root, 'src', 'query', 'aggregations.ts'),
  path.join(root, 'src', 'traces', 'vocabulary.ts'),
  path.join(root, 'src', 'alerts', 'vocabulary.ts'),
  path.join(root, 'src', 'signals', 'vocabulary.ts'),
  path.join(root, 'package-lock.json'),
];
const force = process.argv.includes('--force');
const fresh = !force && fs.existsSync(stamp) && fs.statSync(stamp).mtimeMs >= Math.max(...inputs.map(newest));
if (!fresh) {
  const started = Date.now();
  const { build } = await import('vite');
  await build({ configFile: path.join(web, 'vite.config.ts'), logLevel: 'warn' });
  fs.writeFileSync(stamp, new Date().toISOString() + '\n');
  process.stdout.write(`Built the web application (web/dist) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
