import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { characterCount, COMMENT_MAX, HTML_NESTING_MAX, isBlank, POST_CONTENT_MAX, previewOf, renderMarkdown } from './content.js';

const ALLOWED_TAGS = new Set(['p', 'br', 'hr', 'strong', 'em', 's', 'del', 'a', 'ul', 'ol', 'li', 'blockquote', 'code', 'pre', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
const LINK = /^<a href="(?:https?:\/\/|mailto:)[^"\s]*" rel="nofollow noopener noreferrer ugc" target="_blank">$/;

const tagsOf = (html: string) => html.match(/<[^>]*>/g) ?? [];

/**
 * What every rendering must satisfy, judged on the tags alone: text may mention
 * "javascript:" or "onerror=" (escaped, it is only text), and so may the path of a safe
 * link, but no tag has a handler, and every link's scheme is http, https or mailto.
 */
function expectSafe(html: string) {
  for (const tag of tagsOf(html)) {
    const name = /^<\/?([a-z0-9]+)/.exec(tag)?.[1];
    expect(ALLOWED_TAGS.has(name ?? ''), tag).toBe(true);
    if (name === 'a' && !tag.startsWith('</')) {
      expect(tag).toMatch(LINK);
      // The scheme a browser would see once the attribute's entities are decoded.
      const href = /href="([^"]*)"/.exec(tag)![1]!.replaceAll('&amp;', '&');
      expect(['http:', 'https:', 'mailto:']).toContain(new URL(href).protocol);
    } else {
      expect(tag, tag).toMatch(/^<\/?[a-z0-9]+(?: \/)?>$/); // no attributes at all
    }
    expect(tag).not.toMatch(/="\s*(?:javascript|vbscript|data):|\son\w+=/i);
  }
  expect(html).not.toMatch(/<script|<img|<iframe|<style/i);
}

function nestingDepth(html: string): number {
  let depth = 0;
  let deepest = 0;
  for (const tag of tagsOf(html)) {
    if (tag.endsWith('/>')) continue;
    depth += tag.startsWith('</') ? -1 : 1;
    deepest = Math.max(deepest, depth);
  }
  return deepest;
}

describe('character count', () => {
  it.each([
    { name: 'ASCII letters', unit: 'a', utf16: 1 },
    { name: 'astral emoji', unit: '😀', utf16: 2 },
    { name: 'precomposed é', unit: '\u00e9', utf16: 1 },
    { name: 'decomposed e + combining accent', unit: 'e\u0301', utf16: 2 },
    { name: 'mixed characters', unit: 'a😀\u00e9e\u0301', utf16: 6, perUnit: 4 },
  ])('counts $name as a person does: the post limit fits exactly and one more does not', ({ unit, utf16, perUnit = 1 }) => {
    const atLimit = unit.repeat(POST_CONTENT_MAX / perUnit);
    expect(atLimit.length).toBe((POST_CONTENT_MAX / perUnit) * utf16);
    expect(characterCount(atLimit)).toBe(POST_CONTENT_MAX);
    expect(characterCount(atLimit + 'x')).toBe(POST_CONTENT_MAX + 1);
  });

  it('counts a decomposed é as one character after NFC', () => {
    expect(characterCount('e\u0301')).toBe(1);
    expect(characterCount('caf\u00e9')).toBe(characterCount('cafe\u0301'));
  });

  it('fits 2000 emoji in a comment and not 2001', () => {
    expect(characterCount('😀'.repeat(COMMENT_MAX))).toBe(COMMENT_MAX);
    expect(characterCount('😀'.repeat(COMMENT_MAX + 1))).toBeGreaterThan(COMMENT_MAX);
  });

  it('counts each code point of a ZWJ family and a flag, as documented', () => {
    expect(characterCount('👨‍👩‍👧')).toBe(5);
    expect(characterCount('🇫🇷')).toBe(2);
  });

  it('treats empty, whitespace-only and invisible-only text as blank, and anything visible as not', () => {
    expect(isBlank('')).toBe(true);
    expect(isBlank(' \t\n\r\u00a0\u3000')).toBe(true);
    expect(isBlank('\u200b\u200d\ufeff\u3164')).toBe(true);
    expect(isBlank('  a  ')).toBe(false);
    expect(isBlank('\u200b😀')).toBe(false);
    expect(isBlank('.')).toBe(false);
  });
});

describe('markdown rendering', () => {
  it.each([
    ['<script>alert(1)</script>', []],
    ['<img src=x onerror=alert(1)>', []],
    ['[x](javascript:alert(1))', []],
    ['[x](JaVaScRiPt:alert(1))', []],
    ['[x](java&#x09;script:alert(1))', []],
    ['[x](&#106;avascript:alert(1))', []],
    ['[x]( javascript:alert(1))', []],
    ['[x](<javascript:alert(1)>)', []],
    ['<javascript:alert(1)>', []],
    ['[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)', []],
    ['[x](vbscript:msgbox(1))', []],
    ['<a href="javascript:alert(1)">x</a>', []],
    ['<div onclick="alert(1)">hi</div>', []],
    ['[x]: javascript:alert(1)\n\n[x]', []],
    // The URLs below are genuine and get linked; what follows them stays text.
    ['[x](https://example.com/" onclick="alert(1))', ['https://example.com/']],
    ['[x](https://example.com "title" onclick=alert(1))', ['https://example.com/']],
    ['<style>p{}</style><iframe src="https://evil.example"></iframe>', ['https://evil.example/']],
  ])('renders %j with no script, image, handler or dangerous link in any tag', (input, links) => {
    const html = renderMarkdown(input);
    expectSafe(html);
    expect([...html.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1])).toEqual(links);
  });

  it('shows raw HTML as visible text instead of passing it through', () => {
    expect(renderMarkdown('<script>alert(1)</script>')).toBe('<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n');
    expect(renderMarkdown('<b>hi</b>')).toBe('<p>&lt;b&gt;hi&lt;/b&gt;</p>\n');
  });

  it('keeps escaped entities as visible text, never as a tag', () => {
    const html = renderMarkdown('&lt;b&gt;bold?&lt;/b&gt; fish &amp; chips');
    expect(html).toBe('<p>&lt;b&gt;bold?&lt;/b&gt; fish &amp; chips</p>\n');
  });

  it('never turns image syntax into an <img>, leaving the label as a plain link', () => {
    const html = renderMarkdown('![img](https://example.com/a.png)');
    expect(html).not.toMatch(/<img/i);
    expectSafe(html);
    expect(html).toContain('>img</a>');
  });

  it('drops relative, protocol-relative and ftp links but keeps their text', () => {
    const html = renderMarkdown('[one](/admin) [two](#top) [three](//evil.example) [four](ftp://files.example.com)');
    expect(html).toBe('<p>one two three four</p>\n');
  });

  it('renders bold, emphasis, strike-through, headings, lists, code, quotes and line breaks', () => {
    const html = renderMarkdown(
      '# Title\n###### Small\n\n**bold** *em* ~~gone~~\nnext line\n\n- a\n- b\n\n1. one\n2. two\n\n> quoted\n\n```js\nif (a < b) {}\n```\n\nrun `npm test`\n\n---',
    );
    expectSafe(html);
    expect(html).toBe(
      '<h1>Title</h1>\n<h6>Small</h6>\n<p><strong>bold</strong> <em>em</em> <s>gone</s><br />\nnext line</p>\n' +
        '<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n<ol>\n<li>one</li>\n<li>two</li>\n</ol>\n' +
        '<blockquote>\n<p>quoted</p>\n</blockquote>\n<pre><code>if (a &lt; b) {}\n</code></pre>\n' +
        '<p>run <code>npm test</code></p>\n<hr />\n',
    );
  });

  it('gives every link, written or autolinked, nofollow and a new tab, and drops its title', () => {
    const html = renderMarkdown('[plan](https://example.com/plan "My plan") and www.example.org and me@example.com');
    expect(html).toBe(
      '<p><a href="https://example.com/plan" rel="nofollow noopener noreferrer ugc" target="_blank">plan</a> and ' +
        '<a href="http://www.example.org/" rel="nofollow noopener noreferrer ugc" target="_blank">www.example.org</a> and ' +
        '<a href="mailto:me@example.com" rel="nofollow noopener noreferrer ugc" target="_blank">me@example.com</a></p>\n',
    );
  });

  it('renders the same content to the same HTML every time, whatever its normalisation', () => {
    const content = '**Caf\u00e9** [x](https://example.com)\n- a';
    expect(renderMarkdown(content)).toBe(renderMarkdown(content));
    expect(renderMarkdown('Cafe\u0301')).toBe(renderMarkdown('Caf\u00e9'));
  });

  it.each([
    { name: 'nested emphasis', input: '*a **a ***a '.repeat(400).slice(0, POST_CONTENT_MAX) },
    { name: 'a wall of asterisks', input: `${'*'.repeat(1999)}a${'*'.repeat(2000)}` },
    { name: 'open brackets', input: '['.repeat(POST_CONTENT_MAX) },
    { name: 'unclosed links', input: '[a]('.repeat(1000) },
    { name: '1000 nested quotes', input: `${'> '.repeat(1000)}deep` },
    { name: 'deepening quotes', input: Array.from({ length: 90 }, (_, i) => `${'> '.repeat(i)}x`).join('\n') },
    { name: 'deeply indented lists', input: Array.from({ length: 300 }, (_, i) => `${' '.repeat(i * 2)}- x`).join('\n').slice(0, POST_CONTENT_MAX) },
    { name: 'runs of backticks', input: Array.from({ length: 88 }, (_, i) => `${'`'.repeat(i)}a`).join('').slice(0, POST_CONTENT_MAX) },
    { name: 'angle brackets', input: '<a'.repeat(2000) },
  ])('renders $name quickly, safely and no deeper than the nesting limit', ({ input }) => {
    const started = performance.now();
    const html = renderMarkdown(input);
    previewOf(input);
    expect(performance.now() - started).toBeLessThan(2000);
    expectSafe(html);
    expect(nestingDepth(html)).toBeLessThanOrEqual(HTML_NESTING_MAX);
  });

  it('renders any mix of markdown and HTML fragments safely', () => {
    const fragment = fc.constantFrom(
      ...['<', '>', '[', ']', '(', ')', '"', "'", ' ', '\n', '\t', '*', '_', '`', '~', '!', '#', '&', ';', ':', '/', '\\', '-'],
      ...['javascript:', 'JAVA', 'script', 'data:', 'vbscript:', '&#x09;', '&#106;', 'onerror=', 'img src=x', 'a href=', 'https://e.com', 'mailto:', '//', '> '],
    );
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 60 }), (parts) => {
        expectSafe(renderMarkdown(parts.join('')));
      }),
      { numRuns: 500 },
    );
  });
});

describe('preview', () => {
  it('keeps the words of markdown and drops its syntax', () => {
    expect(previewOf('# Week 3\n\n**Heavy** day: _squats_ and ~~rest~~.\n\n> Go slow\n\n- warm up\n- 5×5')).toBe('Week 3 Heavy day: squats and rest. Go slow warm up 5×5');
  });

  it('keeps a link label and drops its URL', () => {
    expect(previewOf('See [my plan](https://example.com/secret-plan) today')).toBe('See my plan today');
  });

  it('keeps a bare URL the creator typed as text', () => {
    expect(previewOf('Join at https://example.com/live now')).toBe('Join at https://example.com/live now');
  });

  it('decodes entities and keeps raw HTML as plain text', () => {
    expect(previewOf('Fish &amp; chips &lt;3 <b>x</b> &#x1F600;')).toBe('Fish & chips <3 <b>x</b> 😀');
  });

  it('keeps the text of code spans and code blocks', () => {
    expect(previewOf('Run `npm test`:\n\n```\nok  done\n```')).toBe('Run npm test: ok done');
  });

  it('leaves short content whole, with whitespace collapsed and NFC applied', () => {
    expect(previewOf('  Hello\u00a0  world\n\nagain\tcafe\u0301  ')).toBe('Hello world again caf\u00e9');
    expect(previewOf('')).toBe('');
  });

  it('cuts long content at a word boundary and marks the cut with an ellipsis within max', () => {
    const words = 'lift '.repeat(60).trim();
    const preview = previewOf(words);
    expect(preview.endsWith('lift…')).toBe(true);
    expect(characterCount(preview)).toBeLessThanOrEqual(140);
    expect(characterCount(preview)).toBeGreaterThan(140 - 30);
    expect(words.startsWith(preview.slice(0, -1))).toBe(true);
  });

  it('keeps a word that ends exactly at the cut', () => {
    // 139 characters of words then a space: all of them fit before the ellipsis.
    const text = `${'abcdefghij '.repeat(12)}abcdefg more words here`;
    expect(previewOf(text)).toBe(`${'abcdefghij '.repeat(12)}abcdefg…`);
  });

  it('cuts inside a word when no space is near the cut', () => {
    const preview = previewOf(`short ${'x'.repeat(300)}`);
    expect(preview).toBe(`short ${'x'.repeat(133)}…`);
  });

  it('respects max in code points with emoji and never splits a flag', () => {
    expect(previewOf('😀'.repeat(300))).toBe(`${'😀'.repeat(139)}…`);
    expect(previewOf(`${'a'.repeat(138)}🇫🇷${'a'.repeat(10)}`)).toBe(`${'a'.repeat(138)}…`);
    expect(characterCount(previewOf('😀 '.repeat(200)))).toBeLessThanOrEqual(140);
  });

  it('honours a smaller max', () => {
    expect(previewOf('one two three four', 10)).toBe('one two…');
    expect(previewOf('one two three four', 1)).toBe('…');
    expect(previewOf('one two three four', 0)).toBe('');
  });

  it('never exceeds max code points, whatever the content', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.integer({ min: 0, max: 200 }), (content, max) => {
        const preview = previewOf(content, max);
        expect(characterCount(preview)).toBeLessThanOrEqual(max);
        expect(preview).toBe(preview.trim());
      }),
      { numRuns: 300 },
    );
  });
});
