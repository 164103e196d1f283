// Adds lock entries for optional platform packages the registry here does not serve (other OSes'
// and CPUs' builds of chdb and msgpackr-extract). npm leaves them out of package-lock.json when it
// cannot fetch them, and `npm ci` then refuses the lock as out of sync. Each entry carries its
// os/cpu, so npm skips it on other platforms without fetching. Run after every `npm install`.
import { readFileSync, writeFileSync } from 'node:fs';

const lockPath = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const packages = lock.packages;

const PLATFORM = [
  [/darwin-arm64/, ['darwin'], ['arm64']],
  [/darwin-x64/, ['darwin'], ['x64']],
  [/linux-arm64/, ['linux'], ['arm64']],
  [/linux-arm(?!64)/, ['linux'], ['arm']],
  [/linux-x64/, ['linux'], ['x64']],
  [/win32-x64/, ['win32'], ['x64']],
];

let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (packages[key] || packages[`${path}/node_modules/${name}`]) continue;
    const platform = PLATFORM.find(([re]) => re.test(name));
    if (!platform) continue;
    packages[key] = {
      version: String(version).replace(/^[\^~]/, ''),
      cpu: platform[2],
      license: 'see package',
      optional: true,
      os: platform[1],
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(lockPath, JSON.stringify(lock, null, 2) + '\n');
process.stdout.write(`complete-lock: added ${added} optional platform entr${added === 1 ? 'y' : 'ies'}\n`);
