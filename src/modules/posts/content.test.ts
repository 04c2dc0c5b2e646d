import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { characterCount, COMMENT_MAX, excerptOf, HTML_NESTING_MAX, isBlank, plainTextOf, POST_CONTENT_MAX, previewOf, renderMarkdown } from './content.js';

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

describe('plain text and excerpts', () => {
  it('keeps the words of markdown and drops its syntax', () => {
    expect(plainTextOf('# Week 3\n\n**Heavy** day: _squats_ and ~~rest~~.\n\n> Go slow\n\n- warm up\n- 5×5')).toBe('Week 3 Heavy day: squats and rest. Go slow warm up 5×5');
  });

  it('keeps a link label and drops its URL', () => {
    expect(plainTextOf('See [my plan](https://example.com/secret-plan) today')).toBe('See my plan today');
  });

  it('keeps a bare URL the creator typed as text', () => {
    expect(plainTextOf('Join at https://example.com/live now')).toBe('Join at https://example.com/live now');
  });

  it('decodes entities and keeps raw HTML as plain text', () => {
    expect(plainTextOf('Fish &amp; chips &lt;3 <b>x</b> &#x1F600;')).toBe('Fish & chips <3 <b>x</b> 😀');
  });

  it('keeps the text of code spans and code blocks', () => {
    expect(plainTextOf('Run `npm test`:\n\n```\nok  done\n```')).toBe('Run npm test: ok done');
  });

  it('leaves short content whole, with whitespace collapsed and NFC applied', () => {
    expect(excerptOf('  Hello\u00a0  world\n\nagain\tcafe\u0301  ', 140)).toBe('Hello world again caf\u00e9');
    expect(excerptOf('', 140)).toBe('');
  });

  it('cuts long content at a word boundary and marks the cut with an ellipsis within max', () => {
    const words = 'lift '.repeat(60).trim();
    const excerpt = excerptOf(words, 140);
    expect(excerpt.endsWith('lift…')).toBe(true);
    expect(characterCount(excerpt)).toBeLessThanOrEqual(140);
    expect(characterCount(excerpt)).toBeGreaterThan(140 - 30);
    expect(words.startsWith(excerpt.slice(0, -1))).toBe(true);
  });

  it('keeps a word that ends exactly at the cut', () => {
    // 139 characters of words then a space: all of them fit before the ellipsis.
    const text = `${'abcdefghij '.repeat(12)}abcdefg more words here`;
    expect(excerptOf(text, 140)).toBe(`${'abcdefghij '.repeat(12)}abcdefg…`);
  });

  it('cuts inside a word when no space is near the cut', () => {
    expect(excerptOf(`short ${'x'.repeat(300)}`, 140)).toBe(`short ${'x'.repeat(133)}…`);
  });

  it('respects max in code points with emoji and never splits a flag', () => {
    expect(excerptOf('😀'.repeat(300), 140)).toBe(`${'😀'.repeat(139)}…`);
    expect(excerptOf(`${'a'.repeat(138)}🇫🇷${'a'.repeat(10)}`, 140)).toBe(`${'a'.repeat(138)}…`);
    expect(characterCount(excerptOf('😀 '.repeat(200), 140))).toBeLessThanOrEqual(140);
  });

  it('honours a smaller max', () => {
    expect(excerptOf('one two three four', 10)).toBe('one two…');
    expect(excerptOf('one two three four', 1)).toBe('…');
    expect(excerptOf('one two three four', 0)).toBe('');
  });

  it('never exceeds max code points, whatever the content', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.integer({ min: 0, max: 200 }), (content, max) => {
        const excerpt = excerptOf(content, max);
        expect(characterCount(excerpt)).toBeLessThanOrEqual(max);
        expect(excerpt).toBe(excerpt.trim());
      }),
      { numRuns: 300 },
    );
  });
});

/** Markdown-ish text: words, some of them bold, linked or in code, in paragraphs and lists. */
const markdownish = fc
  .array(
    fc.tuple(
      fc.oneof(fc.stringMatching(/^[a-zà-ÿ]{1,12}$/), fc.constantFrom('😀', '🇫🇷', 'e\u0301', '&amp;', '5×5', 'x'.repeat(40))),
      fc.constantFrom('', '', '', '**', '_', '`', 'link'),
      fc.constantFrom(' ', ' ', ' ', '\n', '\n\n', '\n- ', '. '),
    ),
    { maxLength: 120 },
  )
  .map((parts) => parts.map(([word, mark, gap]) => (mark === 'link' ? `[${word}](https://example.com/${word.length})` : `${mark}${word}${mark}`) + gap).join(''));

describe('the automatic preview of a locked post', () => {
  it('gives no preview of a post under 60 characters of text, however it is written', () => {
    expect(previewOf('Gold only: my full deload week, day by day, set by set.')).toBeNull();
    expect(previewOf(`**${'Short'}** [but linked](https://example.com/${'a'.repeat(200)})`)).toBeNull();
    expect(previewOf('😀'.repeat(59))).toBeNull();
  });

  it('keeps at most the first third of a 90-character post, cut at a word', () => {
    const post = 'Gold only: the exact macros I ate every day of my twelve week cut, with the shopping list.';
    expect(characterCount(post)).toBe(90);
    expect(previewOf(post)).toBe('Gold only: the exact macros I…');
  });

  it('keeps at most 140 characters of a long post, cut at a word', () => {
    const post = `${'Sprint intervals build speed and resilience. '.repeat(20)}`;
    const preview = previewOf(post)!;
    expect(characterCount(preview)).toBeLessThanOrEqual(140);
    expect(characterCount(preview)).toBeGreaterThan(110);
    expect(preview).toMatch(/^Sprint intervals build speed and resilience\. .*[a-z.]…$/);
  });

  it('never holds more than a third of the text, nor 140 characters, nor the whole text, and starts the text', () => {
    fc.assert(
      fc.property(markdownish, (content) => {
        const text = plainTextOf(content);
        const n = characterCount(text);
        const preview = previewOf(content);
        if (n < 60) {
          expect(preview).toBeNull();
          return;
        }
        expect(preview).not.toBeNull();
        expect(characterCount(preview!)).toBeLessThanOrEqual(Math.min(140, Math.floor(n / 3)));
        expect(preview!.endsWith('…')).toBe(true);
        expect(text.startsWith(preview!.slice(0, -1))).toBe(true);
        expect(preview).not.toContain(text);
      }),
      { numRuns: 500 },
    );
  });
});
