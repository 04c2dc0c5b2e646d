import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project's root: the nearest folder above this module holding package.json. Files the
 * server reads at run time (the SQL migrations) are found from here, so the same code works
 * from src/ under tsx (tests, the CLI) and bundled into dist/server.mjs (npm start).
 */
function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PROJECT_ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));

/** The built dashboard (npm run build: scripts/build-dashboard.ts writes it, src/modules/dashboard serves it). */
export const DASHBOARD_DIST = path.join(PROJECT_ROOT, 'dist', 'dashboard');
