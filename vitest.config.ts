import os from 'node:os';
import { defineConfig } from 'vitest/config';
import LongFirst from './test/sequencer.js';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Each file opens its own database copy (PGlite) or pool (PostgreSQL); forks keep
    // PGlite's WebAssembly memory out of one shared heap.
    pool: 'forks',
    // Vitest's default, one worker per core but one, runs the files one at a time on a 2-core
    // machine (CI's), though much of a file's time is spent waiting on PostgreSQL, the
    // simulator's webhooks or a child process. Files are written to run side by side: each
    // builds its own tenants, and on PostgreSQL uses simulator schemas of its own.
    // Three (tried 2026-11-28) were no faster in CI's PostgreSQL stage (434 s against 358–404) and
    // slower on PGlite (443 s against 414–419), and the extra load surfaced a test race.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // A worker runs its files one after another in one module graph rather than a fresh one
    // each: importing the app and PGlite took ~2 s per file. Nothing in src/ keeps state
    // between apps but caches (compiled serializers, prepared statement names, the dummy password hash).
    isolate: false,
    // The README walkthrough and the PostgreSQL-only files first (test/sequencer.ts).
    sequence: { sequencer: LongFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
