import fs from 'node:fs';
import path from 'node:path';

/**
 * What the documentation tests need to know of markdown: the headings' anchors as GitHub makes
 * them, and the links a page makes. Code (fenced blocks and inline spans) is neither.
 */

/** The text outside fenced code blocks, line for line (a fenced line becomes empty, so line numbers hold). */
export function withoutFences(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const open = /^\s*(```+|~~~+)/.exec(line);
    if (fence) {
      if (open && open[1]!.startsWith(fence)) fence = undefined;
      return '';
    }
    if (open) {
      fence = open[1]!;
      return '';
    }
    return line;
  });
}

/** A line without its inline code spans (`…`), which hold no links. */
const withoutCodeSpans = (line: string) => line.replace(/(`+)[^`]*?\1/g, '');

/**
 * GitHub's anchor for a heading (github-slugger): the rendered text lower-cased, every character
 * that is not a letter, digit, mark, connector, space or hyphen removed, spaces made hyphens.
 * Links and emphasis count by their text; code spans by their content.
 */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/<[^>]+>/g, '');
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every heading's anchor in a page, a repeated one suffixed `-1`, `-2`… as GitHub does. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

export interface Link {
  line: number;
  /** As written: a path relative to the page, `#anchor`, `path#anchor`, or a URL. */
  target: string;
}

/** The inline links and images of a page (`[text](target)`, `![alt](target)`), outside code. */
export function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  withoutFences(markdown).forEach((line, i) => {
    for (const m of withoutCodeSpans(line).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line: i + 1, target: m[1]! });
    }
  });
  return links;
}

/**
 * What is wrong with a page's links into the repository: a file or directory that is not there,
 * or an anchor that no heading of its page makes. URLs (`https:`, `mailto:`…) are not checked.
 */
export function brokenLinks(root: string, page: string): string[] {
  const file = path.join(root, page);
  const markdown = fs.readFileSync(file, 'utf8');
  const broken: string[] = [];
  for (const { line, target } of linksOf(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
    const resolved = pathPart === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
    const where = `${page}:${line} → ${target}`;
    if (!resolved.startsWith(root + path.sep) && resolved !== root) {
      broken.push(`${where}: outside the repository`);
      continue;
    }
    if (!fs.existsSync(resolved)) {
      broken.push(`${where}: no such file`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (!resolved.endsWith('.md')) {
      broken.push(`${where}: an anchor into a file that is not markdown`);
      continue;
    }
    if (!anchorsOf(fs.readFileSync(resolved, 'utf8')).has(anchor)) broken.push(`${where}: no heading makes #${anchor}`);
  }
  return broken;
}
