/**
 * What a hostile or merely careless client sends. Each list is the catalogue one kind of
 * input is drawn from; the sweep (requests.ts) picks from them with a seeded generator.
 */

const deep = (depth: number, leaf: unknown = 1): unknown => {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
};

/** Values put in place of one JSON body field (or one array element). */
export const JSON_VALUES: readonly unknown[] = [
  // wrong types
  null,
  true,
  false,
  [],
  {},
  [null],
  ['x', 1, null],
  { $gt: '' },
  'null',
  '1',
  'true',
  // numbers out of every range
  0,
  -1,
  -0.5,
  1.5,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53 + 2,
  1e20,
  -1e20,
  1e308,
  -1e308,
  5e-324,
  9999.999,
  // text: empty, blank, control characters, unicode, lone surrogates, over-long
  '',
  ' ',
  '\t\n',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\u202eevil',
  'Ω≈ç√∫ ﷺ 𝕏',
  '🏋️‍♀️'.repeat(40),
  'é'.repeat(121),
  'x'.repeat(201),
  'x'.repeat(5000),
  'x'.repeat(100_001),
  "' or 1=1 --",
  '<script>alert(1)</script>',
  '${jndi:ldap://x}',
  '%E0%A4%A',
  // near-misses of the formats in use
  'not-a-uuid',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6bX',
  'a@b',
  `${'a'.repeat(250)}@example.com`,
  'ü@ñ.example',
  '2024-13-45T25:61:61Z',
  '0000-01-01T00:00:00Z',
  '+275760-09-13T00:00:00.000Z',
  '9999-12-31T23:59:59.999Z',
  '1970-01-01T00:00:00Z',
  'javascript:alert(1)',
  `https://${'a'.repeat(3000)}.example`,
  // nested junk
  deep(40),
  { a: { b: { c: [{ d: 'e' }] } } },
  Array.from({ length: 600 }, (_, i) => i),
  Array.from({ length: 60 }, () => ({ x: 1 })),
];

/** Numbers JSON.stringify cannot write, spliced into the body text in place of one field. */
export const RAW_NUMBERS: readonly string[] = ['1e999', '-1e999', '1e-999', '-0', '100000000000000000000000000000', '0.30000000000000004'];

/** Whole bodies sent as `application/json`. */
export const RAW_BODIES: readonly (string | Buffer)[] = [
  '',
  '   ',
  '{',
  '{"a":',
  '}',
  'null',
  '[]',
  '[{}]',
  '"text"',
  '123',
  'true',
  '{"a":1,}',
  "{'a':1}",
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":1e999}',
  '\ufeff{}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '{"a":"\\x41"}',
  `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
  `{"a":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}`,
  Buffer.from([0xff, 0xfe, 0x7b, 0x7d]),
  Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
];

/** Content types a JSON API should refuse or cope with. */
export const CONTENT_TYPES: readonly string[] = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/JSON',
  'application/json-patch+json',
  'application/vnd.api+json',
  'application/json, text/plain',
  ';;;',
  '*/*',
  `application/json; boundary=${'x'.repeat(2000)}`,
];

/** Path segments in place of an id, as they appear in the URL (already percent-encoded). */
export const PATH_SEGMENTS: readonly string[] = [
  'not-a-uuid',
  '0',
  '-1',
  '1e20',
  '100000000000000000000',
  'null',
  'undefined',
  '%20',
  '%00',
  '%E0%A4%A',
  '%ED%A0%80',
  '%C0%AF',
  '%FF',
  '%',
  '%zz',
  '%2F',
  '%252e',
  '..%2F..%2Fetc%2Fpasswd',
  encodeURIComponent('ü🏋️'),
  encodeURIComponent("'; drop table creators; --"),
  'a'.repeat(101),
  'a'.repeat(5000),
  '0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6bX',
  '0193A1B2-7C4D-7E8F-9A0B-1C2D3E4F5A6B',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '%7B0193a1b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b%7D',
];

/** Query values, as they appear in the URL. */
export const QUERY_VALUES: readonly string[] = [
  '',
  '0',
  '-1',
  '1.5',
  '1e3',
  '1e20',
  '100000000000000000000',
  '-100000000000000000000',
  '9007199254740993',
  '2147483648',
  '10001',
  'NaN',
  'Infinity',
  'true',
  'abc',
  '0x10',
  '+1',
  '%2B1',
  '%201',
  '1,2',
  '%E0%A4%A',
  '%ED%A0%80',
  '%00',
  '%',
  encodeURIComponent('ü🏋️ Ω'),
  encodeURIComponent("%' or 1=1 --"),
  encodeURIComponent('\\_%'),
  'x'.repeat(5000),
];

/** Whole query strings built around one parameter name `p` (repeated, bracketed, nested, bare). */
export const QUERY_SHAPES: readonly ((p: string) => string)[] = [
  (p) => `${p}=1&${p}=2`,
  (p) => `${p}[]=1`,
  (p) => `${p}[a]=1`,
  (p) => `${p}[a][b][c][d][e][f]=1`,
  (p) => `${p}[0]=1&${p}[9999]=2`,
  (p) => p,
  (p) => `${p}=`,
  (p) => `${p}%E0%A4%A=1`,
  (p) => `${p}=1&&&=&`,
  () => '__proto__[polluted]=1',
  () => 'constructor[prototype][polluted]=1',
  () => 'unknown_param=1',
  () => `${'k'.repeat(3000)}=v`,
];

/** Idempotency-Key values, valid or not. */
export const IDEMPOTENCY_KEYS: readonly string[] = ['', ' ', 'a b', 'x'.repeat(256), 'x'.repeat(10_000), 'ключ', '\u0007bell', 'k'];
