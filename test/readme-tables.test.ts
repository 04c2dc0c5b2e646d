import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT } from '../src/config-reference.js';
import { loadConfig } from '../src/config.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { handledEventTypes, regenerate, renderConfigTable, sectionOf, staleSections } from '../scripts/readme/tables.js';

const readme = () => fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');

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

const fix = 'Run `npm run readme:tables` to regenerate the README from the code.';

describe("the README's generated parts", () => {
  it('match the code: the configuration and error tables and the webhook event types', () => {
    const stale = staleSections(readme());
    expect(stale, `${stale.join('\n\n')}\n\n${fix}`).toEqual([]);
  });

  it('are reported line by line when the README differs, and regenerating fixes them', () => {
    const current = readme();
    const edited = current.replace('| `PORT` | `3000` | listen port |', '| `PORT` | `8080` | listen port |');
    expect(edited).not.toBe(current);
    const [stale, ...rest] = staleSections(edited);
    expect(rest).toEqual([]);
    expect(stale).toBe('config-table (- README.md, + code):\n- | `PORT` | `8080` | listen port |\n+ | `PORT` | `3000` | listen port |');
    expect(staleSections(regenerate(edited))).toEqual([]);
    expect(regenerate(current)).toBe(current);
    expect(() => sectionOf('# no markers', 'error-table')).toThrow('README.md has no <!-- error-table:start --> … <!-- error-table:end --> pair');
  });

  it('escape a pipe inside a cell, which would otherwise end it', () => {
    expect(renderConfigTable([{ names: ['X'], default: 'unset', meaning: 'a | b' }]).split('\n')[2]).toBe('| `X` | unset | a \\| b |');
  });

  it('list the webhook event types the inbox has handlers for', () => {
    expect(handledEventTypes()).toContain('checkout.session.completed');
    expect(handledEventTypes()).toContain('payout.paid');
    expect(sectionOf(readme(), 'webhook-events')).toContain('`customer.subscription.updated`');
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
