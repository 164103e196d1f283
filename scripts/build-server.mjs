// Bundles the server (src/main.ts and what it imports from src/ and workers/) into dist/main.js when
// its sources are newer than the last build, so a start loads one JavaScript file instead of
// compiling TypeScript through tsx (docs/operations.md, "Restarts"); `--force` always builds.
// Packages stay external (node_modules, imported as usual). esbuild comes with vite (a dependency).
// Importable: `buildServer()` answers the bundle's path, or null when it can't be built.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SERVER_BUNDLE = path.join(root, 'dist', 'main.js');
const stamp = path.join(root, 'dist', '.build-stamp');

function newest(entry) {
  if (!fs.existsSync(entry)) return 0;
  const stat = fs.statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...fs.readdirSync(entry).map((name) => newest(path.join(entry, name))));
}

/** True when dist/main.js was built after every source, the lock file and this script changed. */
export function serverBundleFresh() {
  if (!fs.existsSync(stamp) || !fs.existsSync(SERVER_BUNDLE)) return false;
  const inputs = ['src', 'workers', 'package-lock.json', 'tsconfig.json', 'scripts/build-server.mjs'].map((p) => path.join(root, p));
  return fs.statSync(stamp).mtimeMs >= Math.max(...inputs.map(newest));
}

export async function buildServer({ force = false, quiet = false } = {}) {
  if (!force && serverBundleFresh()) return SERVER_BUNDLE;
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    return null;
  }
  const started = Date.now();
  fs.mkdirSync(path.dirname(SERVER_BUNDLE), { recursive: true });
  // Written beside, then renamed: a process starting meanwhile never loads half a file.
  const partial = `${SERVER_BUNDLE}.${process.pid}.tmp`;
  await esbuild.build({
    entryPoints: [path.join(root, 'src', 'main.ts')],
    outfile: partial,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
    // Modules find files relative to their own source (src/stores/migrate.ts: ROOT_DIR, the migrations,
    // web/dist): inside the bundle `import.meta.url` is that source's URL, not the bundle's.
    define: { 'import.meta.url': '__sightlineSourceUrl' },
    banner: { js: "const __sightlineSourceUrl = new URL('../src/stores/migrate.ts', import.meta.url).href;" },
  });
  fs.renameSync(partial, SERVER_BUNDLE);
  if (fs.existsSync(`${partial}.map`)) fs.renameSync(`${partial}.map`, `${SERVER_BUNDLE}.map`);
  fs.writeFileSync(stamp, new Date().toISOString() + '\n');
  if (!quiet) process.stdout.write(`Built the server (dist/main.js) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return SERVER_BUNDLE;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const built = await buildServer({ force: process.argv.includes('--force') });
  if (!built) {
    process.stderr.write('esbuild is not installed: the server will start from TypeScript (tsx)\n');
    process.exit(1);
  }
}
