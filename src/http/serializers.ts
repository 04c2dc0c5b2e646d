import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type Serializer = ReturnType<ReturnType<SerializerFactory>>;
type Schema = Record<string, unknown>;

const compileFresh = SerializerSelector();

/** Compiled serializers by the JSON of their external schemas and options, then of the response schema. */
const compiled = new Map<string, Map<string, Serializer>>();

const PRIMITIVE = new Set(['string', 'integer', 'number', 'boolean']);
const isSchema = (x: unknown): x is Schema => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * The same answers, cheaper to write. fast-json-stringify serializes an `anyOf` by validating
 * the value against each branch with Ajv, on every answer; two shapes TypeBox makes all the
 * time need no choosing: a union of literals (an enum: written as the string it is) and
 * `X | null` for a primitive X (a type list: one typeof check). Both become those plain forms,
 * and a union of objects with a discriminating constant an if/then/else on it (below); every
 * other union is left alone. Only the serializers see this, never the OpenAPI document.
 */
export function forSerialization(node: unknown, shared: Record<string, unknown> = {}): unknown {
  if (Array.isArray(node)) return node.map((n) => forSerialization(n, shared));
  if (!isSchema(node)) return node;
  const out: Schema = {};
  for (const [k, v] of Object.entries(node)) out[k] = forSerialization(v, shared);
  const branches = out.anyOf;
  if (!Array.isArray(branches) || !branches.every(isSchema)) return out;
  const { anyOf: _anyOf, ...rest } = out;
  const tagged = discriminated(branches, shared);
  if (tagged) return { ...rest, ...tagged };
  const types = new Set(branches.map((b) => b.type));
  if (branches.every((b) => 'const' in b && Object.keys(b).length === 2) && types.size === 1 && PRIMITIVE.has(branches[0]!.type as string)) {
    return { ...rest, type: branches[0]!.type, enum: branches.map((b) => b.const) };
  }
  const nonNull = branches.filter((b) => b.type !== 'null');
  if (branches.length === 2 && nonNull.length === 1) {
    const [only] = nonNull as [Schema];
    if (typeof only.type === 'string' && PRIMITIVE.has(only.type) && !('const' in only) && !('enum' in only)) {
      return { ...only, ...rest, type: [only.type, 'null'] };
    }
  }
  return out;
}

/** A branch's own schema: itself, or the shared schema its `$ref` names. */
const resolve = (branch: Schema, shared: Record<string, unknown>): Schema | undefined => {
  if (typeof branch.$ref !== 'string') return branch;
  const target = shared[branch.$ref.replace(/#$/, '')];
  return isSchema(target) ? target : undefined;
};

/**
 * A union of objects told apart by one required property whose value each branch fixes
 * (`locked: false` | `locked: true`, the feed's posts) as an if/then/else chain on that
 * property: fast-json-stringify then checks one constant instead of validating the whole
 * value (a post's 4,000 characters measured for maxLength, say) against each branch in turn.
 */
function discriminated(branches: Schema[], shared: Record<string, unknown>): Schema | undefined {
  const resolved = branches.map((b) => resolve(b, shared));
  if (branches.length < 2 || !resolved.every((r): r is Schema => r !== undefined && isSchema(r.properties) && Array.isArray(r.required))) return undefined;
  const tagOf = (r: Schema, name: string) => {
    const prop = (r.properties as Schema)[name];
    return isSchema(prop) && 'const' in prop && (r.required as unknown[]).includes(name) ? prop.const : undefined;
  };
  const name = Object.keys(resolved[0]!.properties as Schema).find((n) => {
    const tags = resolved.map((r) => tagOf(r, n));
    return tags.every((t) => t !== undefined) && new Set(tags).size === tags.length;
  });
  if (!name) return undefined;
  // The last branch is the final else (anyOf would have thrown on a value matching none).
  return branches.reduceRight<Schema | undefined>((otherwise, branch, i) => {
    if (!otherwise) return branch;
    return { if: { type: 'object', properties: { [name]: { const: tagOf(resolved[i]!, name) } }, required: [name] }, then: branch, else: otherwise };
  }, undefined);
}

/**
 * Fastify's response serializer compiler (fast-json-stringify), compiled once per distinct
 * schema rather than once per route and status. An app has ~775 response schemas but only
 * ~100 distinct ones (every route repeats the error bodies), and compiling them all took
 * ~3 s of each start; apps built again in one process (tests build hundreds) reuse them.
 * A serializer depends only on the JSON of its schema, the shared schemas it may `$ref`
 * and fast-json-stringify's options, which together are the key.
 */
export const cachedSerializers: SerializerFactory = (externalSchemas, options) => {
  const shared = (externalSchemas ?? {}) as Record<string, unknown>;
  const compile = compileFresh(forSerialization(externalSchemas, shared) as typeof externalSchemas, options);
  const contextKey = JSON.stringify([externalSchemas ?? null, options ?? null]);
  let bySchema = compiled.get(contextKey);
  if (!bySchema) compiled.set(contextKey, (bySchema = new Map()));
  const cache = bySchema;
  return (route) => {
    const key = JSON.stringify(route.schema ?? null);
    let serializer = cache.get(key);
    if (!serializer) cache.set(key, (serializer = compile({ ...route, schema: forSerialization(route.schema, shared) as typeof route.schema })));
    return serializer;
  };
};
