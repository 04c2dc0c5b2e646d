import MarkdownIt, { type Options } from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import sanitizeHtml from 'sanitize-html';

/**
 * What a post or comment may say and how it is shown: lengths counted as people count them,
 * light markdown rendered to HTML that is safe to insert into any page, and the plain-text
 * preview shown to members whose tier does not open the post. Pure, so the HTML and preview
 * stored with a post are the same whoever renders them, and can be re-rendered in bulk.
 */

export { MEDIA_MAX, MEDIA_TYPES, MEDIA_URL_MAX, mediaUrlProblem } from './media-url.js';

export const POST_CONTENT_MAX = 4000;
export const COMMENT_MAX = 2000;

/**
 * Characters as a person counts them: code points after NFC, so 'é' is one character whether
 * typed precomposed or as 'e' + combining accent, and '😀' is one character, not two UTF-16
 * units. Emoji built from several code points (flags, ZWJ families, skin tones) count as
 * each of their parts; counting grapheme clusters would follow Unicode version changes, and
 * a limit must not move when the runtime's ICU is upgraded.
 */
export function characterCount(text: string): number {
  return [...text.normalize('NFC')].length;
}

/**
 * Whether the text has nothing visible. Invisible format characters (zero-width space,
 * joiners, Hangul fillers: Unicode's "default ignorable" code points) count as blank too,
 * or a post made of them would pass as content while showing nothing.
 */
export function isBlank(text: string): boolean {
  return !/[^\s\p{Default_Ignorable_Code_Point}]/u.test(text);
}

// Block nesting deeper than this is dropped by markdown-it (inline nesting deeper than this
// is left as text), which keeps hostile inputs like 1000 nested quotes linear. No real post
// nests quotes or lists 20 deep.
const MAX_NESTING = 20;

// maxNesting is a real markdown-it option that @types/markdown-it leaves out, hence the
// widened type (a variable, not a literal, so no excess-property check).
const markdownOptions: Options & { maxNesting: number } = {
  html: false, // raw HTML in a post is shown as text, never passed through
  linkify: true,
  typographer: false,
  breaks: true,
  maxNesting: MAX_NESTING,
};

// Media are attached to a post separately (and checked by mediaUrlProblem); an <img> in the
// text would load any URL on every reader's device. Tables are more than light markdown.
const markdown = new MarkdownIt('default', markdownOptions).disable(['image', 'table']);

/** How deep rendered HTML elements may nest; real posts stay far below it. */
export const HTML_NESTING_MAX = 2 * MAX_NESTING;

const LINK_SCHEMES = ['http:', 'https:', 'mailto:'];
const LINK_REL = 'nofollow noopener noreferrer ugc';

/**
 * Every link leaves with the same rel and target whatever the markdown said, and only with
 * an absolute http(s) or mailto address. Relative links ('/admin', '#x') mean nothing in a
 * post shown by several apps, so they lose their link and keep their text (an element
 * renamed to a tag that is not allowed is dropped, its text kept).
 */
function safeLink(_tagName: string, attribs: sanitizeHtml.Attributes): sanitizeHtml.Tag {
  let href: URL | null = null;
  try {
    href = new URL((attribs.href ?? '').trim());
  } catch {
    // not an absolute URL
  }
  if (!href || !LINK_SCHEMES.includes(href.protocol)) return { tagName: 'span', attribs: {} };
  // The parsed form is what a browser will follow, so it is what the page gets.
  return { tagName: 'a', attribs: { href: href.href, rel: LINK_REL, target: '_blank' } };
}

const sanitizeOptions: sanitizeHtml.IOptions = {
  allowedTags: ['p', 'br', 'hr', 'strong', 'em', 's', 'del', 'a', 'ul', 'ol', 'li', 'blockquote', 'code', 'pre', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6'],
  // rel and target are only ever the values safeLink sets.
  allowedAttributes: { a: ['href', 'rel', 'target'] },
  allowedClasses: {},
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: {},
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'xmp', 'iframe', 'noembed', 'noframes'],
  // Emphasis is paired after parsing, so maxNesting does not bound it: 2000 '*' around a
  // word become 1000 nested <strong>. Tags deeper than this are dropped (their text kept) so
  // that no app has to lay out a DOM that deep.
  nestingLimit: HTML_NESTING_MAX,
  transformTags: { a: safeLink },
};

/**
 * A post's markdown as HTML safe to insert into a page. markdown-it escapes raw HTML and
 * refuses javascript:/data:/vbscript: links; the allow-list sanitiser after it is the second
 * wall, so a markdown-it bug or a future option change cannot put a script on the page.
 */
export function renderMarkdown(content: string): string {
  return sanitizeHtml(markdown.render(content.normalize('NFC')), sanitizeOptions);
}

/**
 * The most a post's HTML may weigh, in UTF-8 bytes. Rendering multiplies what links write out:
 * a link's address is written in full for every use of a reference link, twice for a bare URL,
 * and percent-encoded (an emoji becomes 12 characters), so a 4,000-character post of
 * reference links rendered to over 4 MB, and a feed page of them to hundreds. A post over the
 * bound is refused with a reason (posts.service), never cut: cutting would change what the
 * creator wrote without telling them. Real posts stay far below it (a post of 35 links to
 * 90-character addresses renders to ~6 KB); only link-stuffed posts or quote towers reach it.
 */
export const CONTENT_HTML_MAX = 65_536;

/** Why rendered HTML is refused, in words its author can act on; undefined when it fits. */
export function renderedSizeProblem(html: string): string | undefined {
  const bytes = Buffer.byteLength(html);
  if (bytes <= CONTENT_HTML_MAX) return undefined;
  return (
    `renders to ${bytes.toLocaleString('en')} bytes of HTML, more than the ${CONTENT_HTML_MAX.toLocaleString('en')} (64 KB) a post may take. ` +
    'Links weigh the most: every use of a reference link and every bare URL writes its whole address out again. Use fewer links or shorter addresses.'
  );
}

/** The automatic preview: at most this many characters ... */
export const AUTO_PREVIEW_MAX = 140;
/** ... and at most this share of the post's text, so a short post is never given away whole ... */
const AUTO_PREVIEW_SHARE = 3;
/** ... and none at all for a text shorter than this: a third of it would say nothing. */
export const AUTO_PREVIEW_MIN_TEXT = 60;

// How far back from the cut a space is looked for: further back, a long word is cut instead
// of dropping most of the preview.
const WORD_WINDOW = 30;

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * The text a reader would see, without markup. Text tokens are already entity-decoded by
 * markdown-it ('&amp;' arrives as '&'), link labels are kept and their URLs are not. A bare
 * URL the creator typed stays as the text it is (linkify only wraps it in a link), since it
 * is part of what they wrote.
 */
function collectText(tokens: Token[], out: string[]): void {
  for (const token of tokens) {
    if (token.children) collectText(token.children, out);
    else if (token.type === 'text' || token.type === 'code_inline') out.push(token.content);
    else if (token.type === 'code_block' || token.type === 'fence') out.push(' ', token.content, ' ');
    // Breaks and block boundaries (paragraphs, list items, headings) separate words.
    else if (token.type === 'softbreak' || token.type === 'hardbreak' || token.block) out.push(' ');
  }
}

/**
 * At most `max` code points, cut between grapheme clusters (never between a letter and its
 * accent or inside a flag), at the last space within WORD_WINDOW characters of the cut when
 * there is one, with '…' (within `max`) showing that text was cut.
 */
function truncate(text: string, max: number): string {
  if (characterCount(text) <= max) return text;
  if (max < 1) return '';
  let head = '';
  let used = 0;
  for (const { segment } of graphemes.segment(text)) {
    const size = characterCount(segment);
    if (used + size > max - 1) break;
    head += segment;
    used += size;
  }
  if (text[head.length] !== ' ') {
    const space = head.lastIndexOf(' ');
    if (space >= 0 && characterCount(head.slice(space + 1)) <= WORD_WINDOW) head = head.slice(0, space);
  }
  return `${head.trimEnd()}…`;
}

/**
 * What a post's markdown says without markup, whitespace collapsed: the text a reader reads.
 * Plain text, not HTML: '<' and '&' are themselves, and the client escapes them like any
 * other text.
 */
export function plainTextOf(content: string): string {
  const parts: string[] = [];
  collectText(markdown.parse(content.normalize('NFC'), {}), parts);
  // Entities can decode to non-NFC text, hence the second normalisation.
  return parts.join('').normalize('NFC').replace(/\s+/gu, ' ').trim();
}

/** The plain text of the content, at most `max` code points, cut at a word (see truncate). */
export function excerptOf(content: string, max: number): string {
  return truncate(plainTextOf(content), max);
}

/**
 * A locked post's automatic preview (DESIGN §5), used when the creator set none: at most the
 * first third of the post's text and at most AUTO_PREVIEW_MAX characters, cut at a word and
 * marked with '…' within that budget, so it never holds the whole text nor more than a third
 * of it; null (no preview, only the call to upgrade) for a text under AUTO_PREVIEW_MIN_TEXT
 * characters. Ghost gave members-only posts away through their excerpt the same way until it
 * built excerpts only from what the author made public (its pull request 12670).
 */
export function previewOf(content: string): string | null {
  const text = plainTextOf(content);
  const length = characterCount(text);
  if (length < AUTO_PREVIEW_MIN_TEXT) return null;
  const preview = truncate(text, Math.min(AUTO_PREVIEW_MAX, Math.floor(length / AUTO_PREVIEW_SHARE)));
  // A budget of 20+ characters always keeps a word or part of one, but say what happens if not.
  return preview === '' || preview === '…' ? null : preview;
}
