import fs from 'node:fs';
import type { TestProject } from 'vitest/node';
import { openRuntime } from '../../src/runtime.js';
import { tempDataDir, testConfig } from './harness.js';

declare module 'vitest' {
  interface ProvidedContext {
    /** A data directory with every migration applied and no data, copied by each harness (harness.ts). */
    dataTemplate: string;
  }
}

type Shared = { dir: Promise<string>; users: number };
const KEY = Symbol.for('sightline.test.dataTemplate');
const holder = globalThis as { [KEY]?: Shared };

/**
 * Runs in vitest's own process before any test: migrates one empty data directory, which each test
 * file's harness copies instead of migrating a directory of its own (a fresh engine's migrations were
 * most of a harness's start). A copy is as empty, and as private to its file, as a freshly migrated
 * directory. Projects (vitest.config.ts) share the one directory: vitest runs this once per project.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const shared = (holder[KEY] ??= {
    users: 0,
    dir: (async () => {
      const dir = tempDataDir('template');
      const runtime = await openRuntime(testConfig({ DATA_DIR: dir }));
      await runtime.close();
      return dir;
    })(),
  });
  shared.users++;
  project.provide('dataTemplate', await shared.dir);
  return async () => {
    if (--shared.users > 0) return;
    fs.rmSync(await shared.dir, { recursive: true, force: true });
    delete holder[KEY];
  };
}
