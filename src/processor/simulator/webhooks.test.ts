import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCreator, DAY, startKit, subscribe, subscribed, type Kit } from './testkit.js';

let kit: Kit;
beforeAll(async () => {
  kit = await startKit({ retryBaseDelayMs: 40 });
});
afterAll(async () => kit?.close());

const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0]! : v!);

describe('events and webhooks', () => {
  it('delivers the events of a test helper before it returns, each signed so stripe.webhooks.constructEvent accepts it', async () => {
    const c = await createCreator(kit, { schedule: 'manual' });
    const { done } = await subscribe(kit, c);
    expect(done.status).toBe(200);
    // No polling: the helper's events were delivered before it answered.
    const types = kit.receiver.events().filter((e) => e.account === c.account).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['customer.created', 'customer.subscription.created', 'invoice.created', 'invoice.paid', 'charge.succeeded', 'checkout.session.completed']));
    expect(types.indexOf('checkout.session.completed')).toBe(types.length - 1);

    await kit.advance(35 * DAY);
    for (const d of kit.receiver.deliveries) {
      const event = kit.stripe.webhooks.constructEvent(d.body, header(d.headers['stripe-signature']), kit.secret);
      expect(event.livemode).toBe(false);
      // Signed with real time, not the (advanced) simulator clock, so the 5-minute tolerance holds.
      const t = Number(/t=(\d+)/.exec(header(d.headers['stripe-signature']))![1]);
      expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(300);
    }
    expect(() => kit.stripe.webhooks.constructEvent(kit.receiver.deliveries[0]!.body, header(kit.receiver.deliveries[0]!.headers['stripe-signature']), 'whsec_wrong')).toThrow();
    const renewal = kit.receiver.ofType('invoice.paid', (i) => i.billing_reason === 'subscription_cycle' && i.parent.subscription_details.subscription === done.body.subscription);
    expect(renewal).toHaveLength(1);
  });

  it('lists and retrieves events per account in Stripe shape', async () => {
    const c = await createCreator(kit, { schedule: 'manual' });
    const sub = await subscribed(kit, c);
    const list = await kit.stripe.events.list({ type: 'customer.subscription.created' }, c.opts);
    expect(list.data).toHaveLength(1);
    const event = list.data[0]!;
    expect(event).toMatchObject({ object: 'event', type: 'customer.subscription.created', account: c.account, livemode: false, api_version: '2026-10-28.endive' });
    expect((event.data.object as Stripe.Subscription).id).toBe(sub.id);
    const again = await kit.stripe.events.retrieve(event.id, {}, c.opts);
    expect(again.id).toBe(event.id);
    expect(again.pending_webhooks).toBe(0);
    const all = await kit.stripe.events.list({ limit: 3 }, c.opts);
    expect(all.has_more).toBe(true);
    const next = await kit.stripe.events.list({ limit: 3, starting_after: all.data[2]!.id }, c.opts);
    expect(next.data[0]!.id).not.toBe(all.data[2]!.id);
    const platform = await kit.stripe.events.list({ type: 'customer.subscription.created' });
    expect(platform.data.find((e) => e.id === event.id)).toBeUndefined();
    const created = await kit.stripe.products.create({ name: 'Async' }, c.opts);
    await expect.poll(() => kit.receiver.ofType('product.created', (p) => p.id === created.id).length).toBe(1);
  });

  it('retries a receiver that answers 500 with growing delays until it accepts', async () => {
    const c = await createCreator(kit, { schedule: 'manual' });
    const seen = new Map<string, number>();
    kit.receiver.respond = (d) => {
      const e = JSON.parse(d.body);
      if (e.type !== 'product.created') return 200;
      seen.set(e.id, (seen.get(e.id) ?? 0) + 1);
      return seen.get(e.id)! < 4 ? 500 : 200;
    };
    try {
      const product = await kit.stripe.products.create({ name: 'Flaky' }, c.opts);
      await expect.poll(() => kit.receiver.ofType('product.created', (p) => p.id === product.id).length, { timeout: 5000 }).toBe(4);
      const attempts = kit.receiver.deliveries.filter((d) => d.body.includes(product.id) && d.body.includes('product.created'));
      const gaps = attempts.slice(1).map((d, i) => d.receivedAt - attempts[i]!.receivedAt);
      // Each retry waits at least its backoff (40, 80, 160 ms: base × 2^n, counted from the
      // failed answer, which follows its receipt here). Lower bounds only: a loaded machine
      // delays a timer, never fires it early, so gaps compared with each other would flake.
      expect(gaps).toHaveLength(3);
      gaps.forEach((gap, n) => expect(gap, `gap ${n} of ${gaps.join(', ')} ms`).toBeGreaterThanOrEqual(40 * 2 ** n - 2));
      const eventId = JSON.parse(attempts[0]!.body).id as string;
      await expect.poll(async () => (await kit.stripe.events.retrieve(eventId, {}, c.opts)).pending_webhooks).toBe(0);
      await new Promise((r) => setTimeout(r, 400));
      expect(kit.receiver.ofType('product.created', (p) => p.id === product.id)).toHaveLength(4);
    } finally {
      kit.receiver.respond = () => 200;
    }
  });

  it('webhook endpoints registered through the API get their own signed copies and stop after deletion', async () => {
    const bodies: Array<{ body: string; sig: string }> = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        bodies.push({ body, sig: header(req.headers['stripe-signature']) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/wh`;
      const endpoint = await kit.stripe.webhookEndpoints.create({ url, enabled_events: ['product.created'], connect: true });
      expect(endpoint.secret).toMatch(/^whsec_/);
      expect((await kit.stripe.webhookEndpoints.list()).data.map((e) => e.id)).toContain(endpoint.id);
      const c = await createCreator(kit, { schedule: 'manual' });
      await expect.poll(() => bodies.length).toBe(1);
      const event = kit.stripe.webhooks.constructEvent(bodies[0]!.body, bodies[0]!.sig, endpoint.secret!);
      expect(event).toMatchObject({ type: 'product.created', account: c.account });
      await kit.stripe.webhookEndpoints.del(endpoint.id);
      await kit.stripe.products.create({ name: 'After delete' }, c.opts);
      await new Promise((r) => setTimeout(r, 300));
      expect(bodies).toHaveLength(1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('persistence', () => {
  it('keeps objects, the clock, events and idempotent responses across a simulator restart', async () => {
    const c = await createCreator(kit, { amount: 1200, schedule: 'manual' });
    const sub = await subscribed(kit, c);
    const customer = await kit.stripe.customers.create({ email: 'keep@example.com' }, { ...c.opts, idempotencyKey: 'restart-key' });
    const before = await kit.advance(DAY);
    await kit.restart();
    expect(await kit.now()).toBeGreaterThanOrEqual(before);
    expect((await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts)).status).toBe('active');
    const replay = await kit.stripe.customers.create({ email: 'keep@example.com' }, { ...c.opts, idempotencyKey: 'restart-key' });
    expect(replay.id).toBe(customer.id);
    expect((await kit.stripe.events.list({ type: 'checkout.session.completed' }, c.opts)).data).toHaveLength(1);
    const end = sub.items.data[0]!.current_period_end;
    await kit.advance(end - (await kit.now()) + 60);
    const renewed = await kit.stripe.subscriptions.retrieve(sub.id, {}, c.opts);
    expect(renewed.items.data[0]!.current_period_start).toBe(end);
    expect((await kit.stripe.balance.retrieve({}, c.opts)).pending[0]!.amount).toBe(1080);
  });
});
