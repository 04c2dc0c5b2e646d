import crypto from 'node:crypto';

/**
 * The routes of the OpenAPI document, and a valid request to each one built from its own
 * schemas: the sweep mutates that request one part at a time, so every hostile value
 * arrives next to otherwise valid input and gets as deep as validation lets it.
 */
export type Schema = Record<string, any>;
export type Audience = 'creator' | 'member' | 'admin' | 'public';

export interface Operation {
  method: string;
  path: string;
  audience: Audience;
  pathParams: string[];
  query: Record<string, Schema>;
  /** The JSON request body schema, or undefined when the route takes none. */
  body?: Schema;
}

export function operationsOf(doc: any): Operation[] {
  const resolve = (s: Schema): Schema => (s?.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()]) : s);
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const security: unknown[] = op.security ?? doc.security ?? [];
      const scheme = Object.keys((security[0] as object) ?? {})[0];
      const audience: Audience = scheme === 'adminToken' ? 'admin' : scheme === 'memberToken' ? 'member' : scheme === 'creatorKey' ? 'creator' : 'public';
      const params: any[] = op.parameters ?? [];
      const body = op.requestBody?.content?.['application/json']?.schema;
      ops.push({
        method: method.toUpperCase(),
        path,
        audience,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: Object.fromEntries(params.filter((p) => p.in === 'query').map((p) => [p.name, resolve(p.schema)])),
        ...(body ? { body: resolve(body) } : {}),
      });
    }
  }
  return ops;
}

/** Real ids the valid requests use, so they reach the services rather than stop at 404. */
export interface Fixtures {
  byField: Record<string, string>;
  /** Path ids by the resource the path names (`/communities/{id}` → communities). */
  byResource: Record<string, string>;
  now: string;
}

let counter = 0;
const CANDIDATE_TEXTS = (n: number) => [`hostile-${n}-${crypto.randomBytes(3).toString('hex')}`, 'Treino A', '8-12', 'https://img.example.com/a.jpg', 'x'];

/** The first branch of an `anyOf` that is not `null`, i.e. the shape a valid value takes. */
export const mainBranch = (s: Schema): Schema => (s.anyOf ? (s.anyOf.find((b: Schema) => b.type !== 'null') ?? s.anyOf[0]) : s);

/** A value that satisfies `schema`, named `field` (whose name picks a real id for uuids). */
export function validValue(schema: Schema, field: string, fx: Fixtures): unknown {
  const s = mainBranch(schema);
  if (s.enum) return s.enum[0];
  if (s.const !== undefined) return s.const;
  if (s.default !== undefined && s.type !== 'object') return s.default;
  switch (s.type) {
    case 'integer':
    case 'number':
      return Math.min(s.minimum ?? 1, s.maximum ?? Infinity);
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: Math.max(1, s.minItems ?? 0) }, () => validValue(s.items ?? {}, field.replace(/s$/, ''), fx));
    case 'object':
      return validObject(s, fx, false);
    case 'string': {
      if (s.format === 'uuid') return fx.byField[field] ?? crypto.randomUUID();
      if (s.format === 'email') return `hostile-${++counter}-${crypto.randomBytes(3).toString('hex')}@example.com`;
      if (s.format === 'date-time') return fx.now;
      if (s.examples?.[0] && (!s.pattern || new RegExp(s.pattern).test(s.examples[0]))) return s.examples[0];
      const ok = (v: string) => (!s.pattern || new RegExp(s.pattern, 'u').test(v)) && v.length >= (s.minLength ?? 0) && v.length <= (s.maxLength ?? Infinity);
      return CANDIDATE_TEXTS(++counter).find(ok) ?? 'x'.repeat(s.minLength ?? 1);
    }
    default:
      return 'x';
  }
}

/** Required properties always; optional ones too when `withOptional` (so they can be mutated). */
export function validObject(schema: Schema, fx: Fixtures, withOptional: boolean): Record<string, unknown> {
  const required = new Set<string>(schema.required ?? []);
  const out: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries<Schema>(schema.properties ?? {})) {
    if (required.has(name) || withOptional) out[name] = validValue(prop, name, fx);
  }
  return out;
}

/** Every field a body can carry, as paths into it: `name`, `exercises.0.sets`, `benefits.0`. */
export function fieldPaths(schema: Schema, prefix: string[] = []): string[][] {
  const s = mainBranch(schema);
  const paths: string[][] = [];
  if (s.type === 'object' && s.properties) {
    for (const [name, prop] of Object.entries<Schema>(s.properties)) {
      paths.push([...prefix, name]);
      paths.push(...fieldPaths(prop, [...prefix, name]));
    }
  } else if (s.type === 'array' && s.items) {
    paths.push([...prefix, '0']);
    paths.push(...fieldPaths(s.items, [...prefix, '0']));
  }
  return paths;
}

/** A copy of `value` with `path` set to `replacement`, creating what is missing on the way. */
export function withField(value: unknown, path: string[], replacement: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return replacement;
  const base: any = Array.isArray(value) ? [...value] : value && typeof value === 'object' ? { ...value } : /^\d+$/.test(head) ? [] : {};
  base[head] = withField(base[head], rest, replacement);
  return base;
}
