// Bundles the command line (src/cli/main.ts and what it imports) into dist/cli/main.js, so `sightline`
// starts by loading one JavaScript file instead of compiling TypeScript through tsx (docs/cli.md:
// `--help` answers in well under 300 ms). bin/sightline.mjs calls `cliBundle()` on every start: it
// answers the bundle when it was built after every source it holds changed, else rebuilds it (about
// 100 ms, once), else null (no esbuild: bin/ falls back to tsx). esbuild comes with vite.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'dist', 'cli');
export const CLI_BUNDLE = path.join(outdir, 'main.js');
// The sources esbuild read for the last build (from its metafile), so the freshness check stats only those.
const inputsFile = path.join(outdir, 'inputs.json');

function fresh() {
  if (!fs.existsSync(CLI_BUNDLE) || !fs.existsSync(inputsFile)) return false;
  const built = fs.statSync(CLI_BUNDLE).mtimeMs;
  let inputs;
  try {
    inputs = JSON.parse(fs.readFileSync(inputsFile, 'utf8'));
  } catch {
    return false;
  }
  for (const input of [...inputs, 'package-lock.json', 'scripts/build-cli.mjs']) {
    const file = path.join(root, input);
    if (!fs.existsSync(file) || fs.statSync(file).mtimeMs > built) return false;
  }
  return true;
}

export async function cliBundle({ force = false } = {}) {
  if (!force && fresh()) return CLI_BUNDLE;
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    return null;
  }
  // Built beside, then renamed into place: a second `sightline` starting meanwhile never loads half a file.
  const partial = `${CLI_BUNDLE}.${process.pid}.tmp`;
  fs.mkdirSync(outdir, { recursive: true });
  const result = await esbuild.build({
    entryPoints: [path.join(root, 'src', 'cli', 'main.ts')],
    outfile: partial,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    metafile: true,
    write: true,
    logLevel: 'silent',
    // main.ts finds package.json relative to its own source, not to the bundle.
    define: { 'import.meta.url': '__sightlineCliSourceUrl' },
    banner: { js: "const __sightlineCliSourceUrl = new URL('../../src/cli/main.ts', import.meta.url).href;" },
  });
  const inputs = Object.keys(result.metafile.inputs).map((p) => path.relative(root, path.resolve(root, p)));
  fs.writeFileSync(`${inputsFile}.${process.pid}.tmp`, JSON.stringify(inputs));
  fs.renameSync(`${inputsFile}.${process.pid}.tmp`, inputsFile);
  fs.renameSync(partial, CLI_BUNDLE);
  return CLI_BUNDLE;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = await cliBundle({ force: process.argv.includes('--force') });
  process.stdout.write(file ? `built ${path.relative(root, file)}\n` : 'esbuild is not installed; nothing built\n');
}
