import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../src/paths.js';

/** Links and images of the README that point into the repository: each must be there (a renamed screenshot or doc shows up here, not as a broken picture). */
describe('the README', () => {
  it('links and shows only files that exist in the repository', () => {
    const text = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
    const targets = [...text.matchAll(/!?\[[^\]]*\]\(([^)\s#]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/.test(t));
    expect(targets).toContain('docs/screenshots/overview.png');
    expect(targets.filter((t) => !fs.existsSync(path.join(PROJECT_ROOT, t)))).toEqual([]);
  });
});
