import { ENVIRONMENT, type EnvironmentVariable } from '../../src/config-reference.js';
import { ERROR_CODE_MEANINGS, ERROR_CODES, STATUS_BY_CODE } from '../../src/http/errors.js';
import { createEventHandlers } from '../../src/modules/webhooks/handlers.js';

/**
 * The README's parts that code holds the truth of, rendered from it. Each lives between
 * `<!-- NAME:start -->` and `<!-- NAME:end -->`; `npm run readme:tables` rewrites them and
 * test/readme-tables.test.ts fails while the README differs. One module for both, so what the test
 * checks is exactly what the script writes.
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

export const GENERATED_SECTIONS: Record<string, () => string> = {
  'config-table': () => renderConfigTable(),
  'error-table': renderErrorTable,
  'webhook-events': renderWebhookEvents,
};

const markers = (name: string) => [`<!-- ${name}:start -->`, `<!-- ${name}:end -->`] as const;

/** Where a section is: its markers' offsets, their indentation and what lies between them. */
function locate(readme: string, name: string) {
  const [start, end] = markers(name);
  const from = readme.indexOf(start);
  const to = readme.indexOf(end, from);
  if (from < 0 || to < 0) throw new Error(`README.md has no ${start} … ${end} pair`);
  // A section inside a list item is indented like its markers, so it stays in the item.
  const indent = readme.slice(readme.lastIndexOf('\n', from) + 1, from);
  if (!/^ *$/.test(indent)) throw new Error(`README.md: ${start} must start its line`);
  const body = readme
    .slice(from + start.length, to)
    .split('\n')
    .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
    .join('\n')
    .trim();
  return { from, to, start, indent, body };
}

/** What the README holds between a section's markers, without their indentation and the blank lines around it. */
export const sectionOf = (readme: string, name: string): string => locate(readme, name).body;

/** The README with every generated section rewritten from the code (blank lines around it, so markdown sees a block). */
export function regenerate(readme: string): string {
  let text = readme;
  for (const [name, render] of Object.entries(GENERATED_SECTIONS)) {
    const { from, to, start, indent } = locate(text, name);
    const body = render()
      .split('\n')
      .map((line) => indent + line)
      .join('\n');
    text = `${text.slice(0, from)}${start}\n\n${body}\n\n${indent}${text.slice(to)}`;
  }
  return text;
}

/**
 * The generated sections the README has out of date, each as a diff of lines (`-` only in the
 * README, `+` only in the code), empty when it is current.
 */
export function staleSections(readme: string): string[] {
  const stale: string[] = [];
  for (const [name, render] of Object.entries(GENERATED_SECTIONS)) {
    const inReadme = sectionOf(readme, name).split('\n');
    const fromCode = render().split('\n');
    if (inReadme.join('\n') === fromCode.join('\n')) continue;
    const diff = [
      ...inReadme.filter((line) => !fromCode.includes(line)).map((line) => `- ${line}`),
      ...fromCode.filter((line) => !inReadme.includes(line)).map((line) => `+ ${line}`),
    ];
    stale.push(`${name} (- README.md, + code):\n${diff.length ? diff.join('\n') : '(same lines, another order)'}`);
  }
  return stale;
}
