import fs from 'node:fs';
import path from 'node:path';
import { BENCH_GOALS, type BenchGoal } from '../../bench/goals.js';
import { ENVIRONMENT, type EnvironmentVariable } from '../../src/config-reference.js';
import { ERROR_CODE_MEANINGS, ERROR_CODES, STATUS_BY_CODE } from '../../src/http/errors.js';
import { createEventHandlers } from '../../src/modules/webhooks/handlers.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { slug } from './markdown.js';

/**
 * The documentation's parts that code (or a data file) holds the truth of, rendered from it. Each
 * lives in one page (README.md, CONTRIBUTING.md or a page of docs/) between `<!-- NAME:start -->`
 * and `<!-- NAME:end -->`; `npm run readme:tables` rewrites them and test/readme-tables.test.ts
 * fails while a page differs. One module for both, so what the test checks is exactly what the
 * script writes.
 */

/** A table cell: a `|` would end the cell early. */
const cell = (text: string) => text.replace(/\|/g, '\\|');

export function renderConfigTable(variables: readonly EnvironmentVariable[] = ENVIRONMENT): string {
  return [
    '| variable | default | meaning |',
    '|---|---|---|',
    ...variables.map((v) => `| ${v.names.map((n) => `\`${n}\``).join(' / ')} | ${cell(v.default)} | ${cell(v.meaning)} |`),
  ].join('\n');
}

export function renderErrorTable(): string {
  return [
    '| code | HTTP status | meaning |',
    '|---|---|---|',
    ...ERROR_CODES.map((code) => `| \`${code}\` | ${STATUS_BY_CODE[code]} | ${cell(ERROR_CODE_MEANINGS[code])} |`),
  ].join('\n');
}

/**
 * The event types the webhook inbox acts on: the keys of its handler table. Building the table
 * calls nothing, so inert dependencies do.
 */
export function handledEventTypes(): string[] {
  return Object.keys(createEventHandlers({} as Parameters<typeof createEventHandlers>[0])).sort();
}

export function renderWebhookEvents(): string {
  return handledEventTypes().map((type) => `\`${type}\``).join(', ');
}

/**
 * The benchmarks' one table: each bench's goal, today's figure and its command, and where on
 * docs/benchmarks.md the section saying how it was measured is (or another page of docs/).
 */
export function renderBenchGoals(rows: readonly BenchGoal[] = BENCH_GOALS): string {
  const details = (section: string) => (section.endsWith('.md') ? `[${path.basename(section)}](${path.basename(section)})` : `[how](#${slug(section)})`);
  return [
    '| command | scenario | goal | today | met? | measured | |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| \`${r.command}\` | ${cell(r.scenario)} | ${cell(r.goal)} | ${cell(r.figure)} | ${cell(r.met)} | ${r.measured} | ${details(r.section)} |`),
  ].join('\n');
}

/** Each generated section: the page it lives in (relative to the project root) and how it is rendered. */
export const GENERATED_SECTIONS: Record<string, { file: string; render: () => string }> = {
  'config-table': { file: 'docs/operations.md', render: () => renderConfigTable() },
  'webhook-events': { file: 'docs/operations.md', render: renderWebhookEvents },
  'error-table': { file: 'docs/api.md', render: renderErrorTable },
  'bench-goals': { file: 'docs/benchmarks.md', render: () => renderBenchGoals() },
};

/** The pages that hold generated sections. */
export const GENERATED_FILES = [...new Set(Object.values(GENERATED_SECTIONS).map((s) => s.file))];

const sectionsIn = (file: string) => Object.entries(GENERATED_SECTIONS).filter(([, s]) => s.file === file);

/** A page's text, read from the project. */
export const readPage = (file: string): string => fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8');

const markers = (name: string) => [`<!-- ${name}:start -->`, `<!-- ${name}:end -->`] as const;

/** Where a section is: its markers' offsets, their indentation and what lies between them. */
function locate(text: string, name: string, file = GENERATED_SECTIONS[name]?.file ?? 'the page') {
  const [start, end] = markers(name);
  const from = text.indexOf(start);
  const to = text.indexOf(end, from);
  if (from < 0 || to < 0) throw new Error(`${file} has no ${start} … ${end} pair`);
  // A section inside a list item is indented like its markers, so it stays in the item.
  const indent = text.slice(text.lastIndexOf('\n', from) + 1, from);
  if (!/^ *$/.test(indent)) throw new Error(`${file}: ${start} must start its line`);
  const body = text
    .slice(from + start.length, to)
    .split('\n')
    .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
    .join('\n')
    .trim();
  return { from, to, start, indent, body };
}

/** What a page holds between a section's markers, without their indentation and the blank lines around it. */
export const sectionOf = (text: string, name: string): string => locate(text, name).body;

/** The page with every generated section it holds rewritten from the code (blank lines around it, so markdown sees a block). */
export function regenerate(file: string, page: string): string {
  let text = page;
  for (const [name, { render }] of sectionsIn(file)) {
    const { from, to, start, indent } = locate(text, name, file);
    const body = render()
      .split('\n')
      .map((line) => indent + line)
      .join('\n');
    text = `${text.slice(0, from)}${start}\n\n${body}\n\n${indent}${text.slice(to)}`;
  }
  return text;
}

/**
 * The generated sections the pages have out of date, each as a diff of lines (`-` only in the
 * page, `+` only in the code), empty when they are current. `read` gives a page's text.
 */
export function staleSections(read: (file: string) => string = readPage): string[] {
  const stale: string[] = [];
  for (const [name, { file, render }] of Object.entries(GENERATED_SECTIONS)) {
    const inPage = locate(read(file), name, file).body.split('\n');
    const fromCode = render().split('\n');
    if (inPage.join('\n') === fromCode.join('\n')) continue;
    const diff = [
      ...inPage.filter((line) => !fromCode.includes(line)).map((line) => `- ${line}`),
      ...fromCode.filter((line) => !inPage.includes(line)).map((line) => `+ ${line}`),
    ];
    stale.push(`${name} (- ${file}, + code):\n${diff.length ? diff.join('\n') : '(same lines, another order)'}`);
  }
  return stale;
}
