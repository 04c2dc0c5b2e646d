import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, json, type TestApp } from './helpers.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

interface Operation {
  operationId?: string;
  responses: Record<string, { $ref?: string; headers?: Record<string, unknown> }>;
}

let t: TestApp;
let operations: [string, Operation][];
beforeAll(async () => {
  t = await buildTestApp();
  const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
  operations = Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m): [string, Operation] => [`${m.toUpperCase()} ${path}`, item[m]!]),
  );
});
afterAll(() => t.close());

describe('the OpenAPI document', () => {
  it('names every operation with its own readable operationId', () => {
    expect(operations.length).toBeGreaterThan(80);
    const missing = operations.filter(([, op]) => !op.operationId).map(([name]) => name);
    expect(missing).toEqual([]);
    const ids = operations.map(([, op]) => op.operationId!);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z]+$/);
  });
});
