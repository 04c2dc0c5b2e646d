import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT } from '../src/config-reference.js';
import { loadConfig } from '../src/config.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { BENCH_GOALS } from '../bench/goals.js';
import { GENERATED_FILES, GENERATED_SECTIONS, handledEventTypes, readPage, regenerate, renderBenchGoals, renderConfigTable, sectionOf, staleSections } from '../scripts/readme/tables.js';

const operations = () => readPage('docs/operations.md');

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

// `env.X`, `process.env.X`, `env['X']`, and the config's readers called as `intFrom(env, 'X', …)`.
const ENV_READ = /\benv(?:\.([A-Z][A-Z0-9_]*)\b|\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\])|\w+From\(\s*env,\s*['"]([A-Z][A-Z0-9_]*)['"]/g;

function variablesRead(file: string): string[] {
  return [...fs.readFileSync(file, 'utf8').matchAll(ENV_READ)].map((m) => (m[1] ?? m[2] ?? m[3])!);
}

/**
 * What the code reads: every variable in src/ and scripts/ outside tests, and the TEST_* variables the
 * test set-up reads (tests may set and restore others, such as TZ, which configure nothing).
 */
function variablesTheCodeReads(): Set<string> {
  const names = new Set<string>();
  const shipped = [...filesUnder(path.join(PROJECT_ROOT, 'src')), ...filesUnder(path.join(PROJECT_ROOT, 'scripts'))];
  for (const file of shipped.filter((f) => !f.endsWith('.test.ts'))) {
    for (const name of variablesRead(file)) names.add(name);
  }
  for (const file of filesUnder(path.join(PROJECT_ROOT, 'test'))) {
    for (const name of variablesRead(file)) if (name.startsWith('TEST_')) names.add(name);
  }
  return names;
}

const fix = 'Run `npm run readme:tables` to regenerate the documentation from the code.';

describe("the documentation's generated parts", () => {
  it('match the code: the configuration, error and benchmark tables and the webhook event types', () => {
    const stale = staleSections();
    expect(stale, `${stale.join('\n\n')}\n\n${fix}`).toEqual([]);
  });

  it('each live in one page, which holds its markers once', () => {
    expect(Object.keys(GENERATED_SECTIONS).sort()).toEqual(['bench-goals', 'config-table', 'error-table', 'webhook-events']);
    for (const [name, { file }] of Object.entries(GENERATED_SECTIONS)) {
      for (const page of ['README.md', 'CONTRIBUTING.md', ...GENERATED_FILES]) {
        const count = readPage(page).split(`<!-- ${name}:start -->`).length - 1;
        expect(count, `${name} in ${page}`).toBe(page === file ? 1 : 0);
      }
    }
  });

  it('are reported line by line when a page differs, and regenerating fixes them', () => {
    const current = operations();
    const edited = current.replace('| `PORT` | `3000` | listen port |', '| `PORT` | `8080` | listen port |');
    expect(edited).not.toBe(current);
    const read = (file: string) => (file === 'docs/operations.md' ? edited : readPage(file));
    const [stale, ...rest] = staleSections(read);
    expect(rest).toEqual([]);
    expect(stale).toBe('config-table (- docs/operations.md, + code):\n- | `PORT` | `8080` | listen port |\n+ | `PORT` | `3000` | listen port |');
    const fixed = regenerate('docs/operations.md', edited);
    expect(staleSections((file) => (file === 'docs/operations.md' ? fixed : readPage(file)))).toEqual([]);
    expect(regenerate('docs/operations.md', current)).toBe(current);
    expect(() => sectionOf('# no markers', 'error-table')).toThrow('docs/api.md has no <!-- error-table:start --> … <!-- error-table:end --> pair');
  });

  it('escape a pipe inside a cell, which would otherwise end it', () => {
    expect(renderConfigTable([{ names: ['X'], default: 'unset', meaning: 'a | b' }]).split('\n')[2]).toBe('| `X` | unset | a \\| b |');
  });

  it('list the webhook event types the inbox has handlers for', () => {
    expect(handledEventTypes()).toContain('checkout.session.completed');
    expect(handledEventTypes()).toContain('payout.paid');
    expect(sectionOf(operations(), 'webhook-events')).toContain('`customer.subscription.updated`');
  });
});

describe("the benchmarks' table (bench/goals.ts, docs/benchmarks.md)", () => {
  const scripts = (): Record<string, string> => JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')).scripts;

  it('has a row for every bench script of package.json, and names only scripts that exist', () => {
    const benches = Object.keys(scripts()).filter((name) => name.startsWith('bench'));
    expect(benches.length).toBeGreaterThan(5);
    expect(benches.filter((name) => !BENCH_GOALS.some((row) => row.script === name)), 'bench scripts without a row').toEqual([]);
    expect(BENCH_GOALS.filter((row) => !(row.script in scripts())).map((row) => row.script), 'rows naming no script').toEqual([]);
  });

  it('gives each row a command that runs its script, a goal, a figure, a verdict and a date', () => {
    for (const row of BENCH_GOALS) {
      const where = `${row.script}: ${row.scenario}`;
      expect(row.command, where).toMatch(new RegExp(`(^|\\s)npm run ${row.script.replace(':', '\\:')}(\\s|$)`));
      expect(row.goal.trim(), where).not.toBe('');
      expect(row.figure.trim(), where).not.toBe('');
      expect(row.met, where).toMatch(/^(yes|no|at |not measured|no goal)/);
      expect(row.measured, where).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });

  it('links each row to the section that says how it was measured', () => {
    const page = readPage('docs/benchmarks.md');
    const headings = [...page.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    for (const row of BENCH_GOALS.filter((r) => !r.section.endsWith('.md'))) expect(headings, row.scenario).toContain(row.section);
    expect(renderBenchGoals([BENCH_GOALS[0]!]).split('\n')[2]).toContain('[how](#logging-workouts)');
  });
});

describe('the configuration reference (src/config-reference.ts)', () => {
  it('lists every environment variable the code reads, and only those', () => {
    const listed = ENVIRONMENT.flatMap((v) => v.names);
    const read = variablesTheCodeReads();
    expect([...read].filter((name) => !listed.includes(name)).sort(), 'read by the code but missing from ENVIRONMENT').toEqual([]);
    expect(listed.filter((name) => !read.has(name)), 'listed in ENVIRONMENT but read nowhere').toEqual([]);
    expect(new Set(listed).size, 'a variable listed twice').toBe(listed.length);
  });

  it('gives the real defaults: setting a variable to its documented default changes nothing', () => {
    const defaults = loadConfig({});
    let checked = 0;
    for (const variable of ENVIRONMENT) {
      // "`127.0.0.1` / `12111`": one literal per name; unset, generated, off and abbreviated ones are not values.
      const literals = variable.default.split(' / ').map((part) => /^`([^`…]+)`$/.exec(part)?.[1]);
      if (literals.length !== variable.names.length || literals.some((l) => l === undefined)) continue;
      const env = Object.fromEntries(variable.names.map((name, i) => [name, literals[i]!]));
      expect(loadConfig(env), `${variable.names.join(' / ')} = ${variable.default}`).toEqual(defaults);
      checked++;
    }
    expect(checked).toBeGreaterThan(20);
  });
});
