// Bundles the server (src/main.ts and what it imports from src/ and workers/) into dist/server/ when
// its sources are newer than the last build, so a start loads one JavaScript file instead of
// compiling TypeScript through tsx (docs/operations.md, "Restarts"); `--force` always builds.
// Packages stay external (node_modules, imported as usual); the parts main.ts imports lazily (api,
// web, workers) become chunks of their own, so a mode still loads only its parts' code and packages.
// esbuild comes with vite (a dependency).
// Importable: `buildServer()` answers the bundle's path, or null when it can't be built.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'dist', 'server');
export const SERVER_BUNDLE = path.join(outdir, 'main.js');
const stamp = path.join(outdir, '.build-stamp');

function newest(entry) {
  if (!fs.existsSync(entry)) return 0;
  const stat = fs.statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...fs.readdirSync(entry).map((name) => newest(path.join(entry, name))));
}

/** True when dist/server/main.js was built after every source, the lock file and this script changed. */
export function serverBundleFresh() {
  if (!fs.existsSync(stamp) || !fs.existsSync(SERVER_BUNDLE)) return false;
  const inputs = ['src', 'workers', 'package-lock.json', 'tsconfig.json', 'scripts/build-server.mjs'].map((p) =>
    path.join(root, p),
  );
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
  // Built beside, then swapped in: a process starting meanwhile never loads half a build.
  const partial = `${outdir}.${process.pid}.tmp`;
  fs.rmSync(partial, { recursive: true, force: true });
  await esbuild.build({
    entryPoints: [path.join(root, 'src', 'main.ts')],
    outdir: partial,
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
    // Modules find files relative to their own source (src/stores/migrate.ts: ROOT_DIR, the migrations,
    // web/dist): inside the bundle `import.meta.url` is that source's URL, not the bundle's.
    define: { 'import.meta.url': '__sightlineSourceUrl' },
    banner: { js: "const __sightlineSourceUrl = new URL('../../src/stores/migrate.ts', import.meta.url).href;" },
  });
  fs.writeFileSync(path.join(partial, '.build-stamp'), new Date().toISOString() + '\n');
  const old = `${outdir}.${process.pid}.old`;
  if (fs.existsSync(outdir)) fs.renameSync(outdir, old);
  fs.renameSync(partial, outdir);
  fs.rmSync(old, { recursive: true, force: true });
  if (!quiet)
    process.stdout.write(`Built the server (dist/server/main.js) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return SERVER_BUNDLE;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const built = await buildServer({ force: process.argv.includes('--force') });
  if (!built) {
    process.stderr.write('esbuild is not installed: the server will start from TypeScript (tsx)\n');
    process.exit(1);
  }
}
