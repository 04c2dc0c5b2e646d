import http from 'node:http';
import { Ajv, type ValidateFunction } from 'ajv';
import formatsPlugin from 'ajv-formats';
import { Webhook } from 'standardwebhooks';
import { webhooksSection } from '../src/modules/events/catalog/openapi.js';
import { expect } from 'vitest';
import { createCommunity, createTier, json, mintMember, type TestApp, type TestCreator, type TestMember } from './helpers.js';
import { mirrorSubscription } from './members-kit.js';

/** What a receiver got: the headers and the body as sent, byte for byte. */
export interface Received {
  headers: Record<string, string>;
  body: string;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
}

/**
 * A webhook receiver on 127.0.0.1 (allowed with the simulator, DESIGN §9) that answers what
 * `answer` says (200 by default), `delayMs` after the request came, and keeps every request.
 */
export async function startReceiver(answer: (r: Received) => { status: number; body?: string; headers?: Record<string, string> } = () => ({ status: 200, body: 'ok' }), delayMs = 0) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const r: Received = { headers: req.headers as Record<string, string>, body, payload: JSON.parse(body) };
      received.push(r);
      const a = answer(r);
      setTimeout(() => res.writeHead(a.status, a.headers).end(a.body ?? ''), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    ofType: (type: string) => received.filter((r) => r.payload.type === type),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Verifies a delivery with the npm `standardwebhooks` package (not our signer), and its
 * payload against the type's schema as the OpenAPI document publishes it; returns the payload.
 */
export function verified(secret: string, r: Received) {
  const payload = new Webhook(secret).verify(r.body, {
    'webhook-id': r.headers['webhook-id']!,
    'webhook-timestamp': r.headers['webhook-timestamp']!,
    'webhook-signature': r.headers['webhook-signature']!,
  }) as Received['payload'];
  const validate = bodySchemas().get(payload.type);
  expect(validate, `${payload.type} is in the OpenAPI document's webhooks`).toBeDefined();
  expect(validate!(payload) ? [] : validate!.errors, `${payload.type} matches its published schema`).toEqual([]);
  return payload;
}

type FormatsPlugin = (ajv: Ajv) => Ajv;
const addFormats = ((formatsPlugin as unknown as { default?: FormatsPlugin }).default ?? formatsPlugin) as unknown as FormatsPlugin;
let compiled: Map<string, ValidateFunction> | undefined;
/** Each type's request body as the OpenAPI document's `webhooks` section publishes it, compiled once. */
function bodySchemas(): Map<string, ValidateFunction> {
  if (compiled) return compiled;
  const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
  const section = webhooksSection() as Record<string, { post: { requestBody: { content: { 'application/json': { schema: object } } } } }>;
  compiled = new Map(Object.entries(section).map(([type, item]) => [type, ajv.compile(item.post.requestBody.content['application/json'].schema)]));
  return compiled;
}

export async function createEndpoint(t: TestApp, creator: TestCreator, body: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: creator.headers, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return json(res).data as { id: string; secret: string; url: string; events: string[] };
}

/** A community with a tier, and a member with a live subscription to it (mirrored, no processor). */
export async function communityWithMember(t: TestApp, creator: TestCreator): Promise<{ communityId: string; member: TestMember }> {
  const community = await createCommunity(t, creator);
  const tier = await createTier(t, creator, community.id);
  const member = await mintMember(t);
  await mirrorSubscription(t, creator, { communityId: community.id, tierId: tier.id, memberId: member.id }, { status: 'active' });
  return { communityId: community.id, member };
}
