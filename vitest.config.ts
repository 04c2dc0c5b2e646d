import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Each file opens its own database copy (PGlite) or pool (PostgreSQL); forks keep
    // PGlite's WebAssembly memory out of one shared heap.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
