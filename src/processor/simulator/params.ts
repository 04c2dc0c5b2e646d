import qs from 'qs';
import { invalidRequest, missingParam } from './errors.js';

/**
 * Request parameters as Stripe clients send them: form-encoded with bracketed nesting
 * (`recurring[interval]=month`, `items[0][price]=price_1`, `expand[]=x`), so every leaf is a
 * string; or JSON (the test helpers), where leaves are already typed. Accessors take the
 * parameter's Stripe name (`recurring[interval]`) so a validation error names it exactly
 * as Stripe would.
 */
export function parseForm(text: string): Record<string, unknown> {
  // Large limits: Stripe accepts up to 50 metadata keys and long item arrays, and qs's
  // defaults would silently turn `a[25]` into an object key or drop deep nesting.
  return qs.parse(text, { depth: 10, arrayLimit: 1000, parameterLimit: 5000, allowPrototypes: false }) as Record<string, unknown>;
}

const pathOf = (name: string): string[] => name.replace(/\]/g, '').split('[');

export class Params {
  constructor(readonly raw: Record<string, unknown>) {}

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  get(name: string): unknown {
    let cur: unknown = this.raw;
    for (const key of pathOf(name)) {
      if (cur === null || typeof cur !== 'object') return undefined;
      cur = (cur as Record<string, unknown>)[key];
    }
    return cur;
  }

  str(name: string): string | undefined {
    const v = this.get(name);
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    throw invalidRequest(`Invalid string: ${name} must be a string.`, name);
  }

  reqStr(name: string): string {
    const v = this.str(name);
    if (v === undefined || v === '') throw missingParam(name);
    return v;
  }

  int(name: string, opts: { min?: number; max?: number } = {}): number | undefined {
    const v = this.get(name);
    if (v === undefined || v === null || v === '') return undefined;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n)) throw invalidRequest(`Invalid integer: ${String(v)}`, name);
    if (opts.min !== undefined && n < opts.min) {
      throw invalidRequest(`Invalid ${name}: must be greater than or equal to ${opts.min}`, name);
    }
    if (opts.max !== undefined && n > opts.max) throw invalidRequest(`Invalid ${name}: must be at most ${opts.max}`, name);
    return n;
  }

  reqInt(name: string, opts: { min?: number; max?: number } = {}): number {
    const n = this.int(name, opts);
    if (n === undefined) throw missingParam(name);
    return n;
  }

  decimal(name: string): number | undefined {
    const v = this.get(name);
    if (v === undefined || v === null || v === '') return undefined;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : NaN;
    if (!Number.isFinite(n)) throw invalidRequest(`Invalid decimal: ${String(v)}`, name);
    return n;
  }

  bool(name: string): boolean | undefined {
    const v = this.get(name);
    if (v === undefined || v === null || v === '') return undefined;
    if (v === true || v === 'true') return true;
    if (v === false || v === 'false') return false;
    throw invalidRequest(`Invalid boolean: ${String(v)}`, name);
  }

  enumOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const v = this.str(name);
    if (v === undefined || v === '') return undefined;
    if (!(allowed as readonly string[]).includes(v)) {
      throw invalidRequest(`Invalid ${name}: must be one of ${allowed.join(', ')}`, name);
    }
    return v as T;
  }

  /** qs yields arrays for `a[0]`/`a[]`, JSON yields arrays; an object keyed 0..n is accepted too. */
  list(name: string): unknown[] | undefined {
    const v = this.get(name);
    if (v === undefined || v === null || v === '') return undefined;
    if (Array.isArray(v)) return v;
    if (typeof v === 'object') return Object.keys(v).sort((a, b) => Number(a) - Number(b)).map((k) => (v as Record<string, unknown>)[k]);
    return [v];
  }

  strList(name: string): string[] | undefined {
    return this.list(name)?.map((x, i) => {
      if (typeof x !== 'string') throw invalidRequest(`Invalid array: ${name}[${i}] must be a string.`, `${name}[${i}]`);
      return x;
    });
  }

  /** Child params for `items[0]`, `recurring`, ... */
  child(name: string): Params | undefined {
    const v = this.get(name);
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'object') throw invalidRequest(`Invalid object: ${name}`, name);
    return new Params(v as Record<string, unknown>);
  }

  expand(): string[] {
    return this.strList('expand') ?? [];
  }

  /**
   * Stripe's metadata update semantics: keys merge into the existing map, a key set to ''
   * is removed, and `metadata=''` clears everything.
   */
  metadata(existing: Record<string, string> = {}): Record<string, string> {
    const v = this.get('metadata');
    if (v === undefined || v === null) return existing;
    if (v === '') return {};
    if (typeof v !== 'object' || Array.isArray(v)) throw invalidRequest('Invalid object: metadata', 'metadata');
    const out: Record<string, string> = { ...existing };
    for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
      if (val === '' || val === null) delete out[k];
      else out[k] = String(val);
    }
    if (Object.keys(out).length > 50) throw invalidRequest('Metadata can have at most 50 keys.', 'metadata');
    return out;
  }
}
