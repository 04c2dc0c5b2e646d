import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../src/paths.js';
import { anchorsOf, brokenLinks, linksOf, slug } from '../scripts/readme/markdown.js';

/** The documentation: README.md, CONTRIBUTING.md and every page under docs/. */
function pages(): string[] {
  const docs = fs
    .readdirSync(path.join(PROJECT_ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('docs', f));
  return ['README.md', 'CONTRIBUTING.md', ...docs.sort()];
}

const read = (page: string) => fs.readFileSync(path.join(PROJECT_ROOT, page), 'utf8');

/**
 * Every relative link and image of the documentation resolves: the file or directory exists and,
 * for `page.md#anchor` or `#anchor`, a heading of that page makes the anchor as GitHub does. A
 * renamed screenshot, page or heading shows up here, not as a broken link.
 */
describe('the documentation', () => {
  it('links and shows only files and headings that exist', () => {
    const broken = pages().flatMap((page) => brokenLinks(PROJECT_ROOT, page));
    expect(broken).toEqual([]);
  });

  it('has the README show the dashboard and link every page of docs/ and CONTRIBUTING.md', () => {
    const targets = linksOf(read('README.md')).map((l) => l.target.split('#')[0]);
    expect(targets).toContain('docs/screenshots/overview.png');
    const linked = pages().filter((p) => p !== 'README.md' && !targets.includes(p.split(path.sep).join('/')));
    expect(linked, 'pages the README does not link').toEqual([]);
  });

  it('keeps the README a five-minute read', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(250);
  });
});

describe('anchors as GitHub makes them', () => {
  it('lower-case the text, drop punctuation and code ticks, and make spaces hyphens', () => {
    expect(slug('The creator\'s processor account')).toBe('the-creators-processor-account');
    expect(slug('Checkout → subscription')).toBe('checkout--subscription');
    expect(slug('Challenge leaderboards at 100,000 participants')).toBe('challenge-leaderboards-at-100000-participants');
    expect(slug('Outgoing events (webhooks to your endpoints)')).toBe('outgoing-events-webhooks-to-your-endpoints');
    expect(slug('`npm run cluster`: what it runs')).toBe('npm-run-cluster-what-it-runs');
    expect(slug('A [linked](x.md) heading_with_underscores')).toBe('a-linked-heading_with_underscores');
  });

  it('number a repeated heading and ignore headings inside code blocks', () => {
    const anchors = anchorsOf('# Notes\n\n## Notes\n\n```sh\n# not a heading\n```\n');
    expect([...anchors]).toEqual(['notes', 'notes-1']);
  });

  it('find links outside code only, and report what does not resolve', () => {
    const links = linksOf('[a](x.md) `[b](y.md)`\n```\n[c](z.md)\n```\n![d](img.png "title")');
    expect(links.map((l) => l.target)).toEqual(['x.md', 'img.png']);
    const dir = fs.mkdtempSync(path.join(PROJECT_ROOT, '.tmp-links-'));
    try {
      fs.writeFileSync(path.join(dir, 'a.md'), '# A page\n\n[ok](#a-page) [gone](#nowhere) [file](b.md#b) [missing](c.md) [web](https://example.com/x)\n');
      fs.writeFileSync(path.join(dir, 'b.md'), '# B\n');
      const page = path.relative(PROJECT_ROOT, path.join(dir, 'a.md'));
      expect(brokenLinks(PROJECT_ROOT, page).map((b) => b.replace(/^.*→ /, ''))).toEqual(['#nowhere: no heading makes #nowhere', 'c.md: no such file']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
