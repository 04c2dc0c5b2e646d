import { Type } from '@sinclair/typebox';
import fastJson from 'fast-json-stringify';
import { describe, expect, it } from 'vitest';
import { forSerialization } from './serializers.js';

describe('schemas as the serializers see them', () => {
  it('write a union of literals as an enum and a nullable primitive as a type list, keeping descriptions and bounds', () => {
    const schema = Type.Object({
      period: Type.Union([Type.Literal('monthly'), Type.Literal('yearly')], { description: 'How often.' }),
      level: Type.Union([Type.Integer({ format: 'int64', maximum: 9 }), Type.Null()]),
    });
    expect(forSerialization(schema)).toMatchObject({
      properties: {
        period: { type: 'string', enum: ['monthly', 'yearly'], description: 'How often.' },
        level: { type: ['integer', 'null'], format: 'int64', maximum: 9 },
      },
    });
  });

  it('leave every other union as it is', () => {
    const objects = Type.Union([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]);
    const nullableObject = Type.Union([Type.Object({ a: Type.String() }), Type.Null()]);
    const mixedLiterals = Type.Union([Type.Literal('a'), Type.Literal(1)]);
    for (const s of [objects, nullableObject, mixedLiterals]) expect(forSerialization(s)).toEqual(JSON.parse(JSON.stringify(s)));
  });

  it('serialize valid answers exactly as the original schema does', () => {
    const schema = Type.Object({
      period: Type.Union([Type.Literal('monthly'), Type.Literal('yearly')]),
      level: Type.Union([Type.Integer(), Type.Null()]),
      at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    });
    const [before, after] = [fastJson(schema), fastJson(forSerialization(schema) as object)];
    for (const value of [
      { period: 'monthly', level: 3, at: '2026-01-01T00:00:00.000Z' },
      { period: 'yearly', level: null, at: null },
      { period: 'yearly', level: 0, at: new Date(0) },
    ]) {
      expect(after(value)).toBe(before(value));
    }
  });

  it('tell a union of objects apart by the constant that discriminates them, as the original does', () => {
    const Open = Type.Object({ locked: Type.Literal(false), content: Type.String({ maxLength: 4000 }) }, { $id: 'Open' });
    const Shut = Type.Object({ locked: Type.Literal(true), preview: Type.String() }, { $id: 'Shut' });
    const Item = Type.Object({ data: Type.Array(Type.Union([Type.Ref(Open), Type.Ref(Shut)])) });
    const shared = { Open, Shut };
    const rewritten = forSerialization(Item, shared) as { properties: { data: { items: Record<string, unknown> } } };
    expect(rewritten.properties.data.items).toMatchObject({ if: { properties: { locked: { const: false } } }, then: { $ref: 'Open' }, else: { $ref: 'Shut' } });
    const [before, after] = [fastJson(Item as never, { schema: shared as never }), fastJson(rewritten as never, { schema: shared as never })];
    const value = { data: [{ locked: false, content: 'é'.repeat(3000), extra: 1 }, { locked: true, preview: 'Hi', content: 'secret' }] };
    expect(after(value)).toBe(before(value));
    expect(JSON.parse(after(value)).data[1]).toEqual({ locked: true, preview: 'Hi' });
  });
});
