import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type Serializer = ReturnType<ReturnType<SerializerFactory>>;

const compileFresh = SerializerSelector();

/** Compiled serializers by the JSON of their external schemas and options, then of the response schema. */
const compiled = new Map<string, Map<string, Serializer>>();

/**
 * Fastify's response serializer compiler (fast-json-stringify), compiled once per distinct
 * schema rather than once per route and status. An app has ~775 response schemas but only
 * ~100 distinct ones (every route repeats the error bodies), and compiling them all took
 * ~3 s of each start; apps built again in one process (tests build hundreds) reuse them.
 * A serializer depends only on the JSON of its schema, the shared schemas it may `$ref`
 * and fast-json-stringify's options, which together are the key.
 */
export const cachedSerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = compileFresh(externalSchemas, options);
  const contextKey = JSON.stringify([externalSchemas ?? null, options ?? null]);
  let bySchema = compiled.get(contextKey);
  if (!bySchema) compiled.set(contextKey, (bySchema = new Map()));
  const cache = bySchema;
  return (route) => {
    const key = JSON.stringify(route.schema ?? null);
    let serializer = cache.get(key);
    if (!serializer) cache.set(key, (serializer = compile(route)));
    return serializer;
  };
};
