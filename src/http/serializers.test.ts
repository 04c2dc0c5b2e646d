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
});
