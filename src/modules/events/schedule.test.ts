import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEndpoint, startReceiver } from '../../../test/events-kit.js';
import { buildTestApp, createCreator, json, type TestApp } from '../../../test/helpers.js';
import { createDispatcher, MAX_ATTEMPTS, RETRY_DELAYS_S } from './dispatcher.js';
import { createSender } from './sender.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

it('retries on the schedule for about three days, then parks the delivery as dead; five days of failures disable the endpoint', async () => {
  const creator = await createCreator(t);
  const receiver = await startReceiver(() => ({ status: 503 }));
  const endpoint = await createEndpoint(t, creator, { url: receiver.url });
  const watcher = await startReceiver();
  await createEndpoint(t, creator, { url: watcher.url, events: ['webhook_endpoint.disabled'] });
  // A clock this test moves; no jitter, so each wait is the schedule's.
  let clock = Date.now();
  const sender = createSender({ allowLoopback: true });
  const dispatcher = createDispatcher({ db: t.database.db, sender, now: () => new Date(clock), random: () => 0.5 });
  await t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${endpoint.id}/test`, headers: creator.headers });
  clock = Date.now() + 1000;
  const deliveryOf = async () => json(await t.app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}/deliveries`, headers: creator.headers })).data[0];

  const started = clock;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    expect(await dispatcher.runOnce({ creatorIds: [creator.id] })).toBe(1);
    const d = await deliveryOf();
    expect(d.attempts).toBe(attempt);
    if (attempt < MAX_ATTEMPTS) {
      expect(d.status).toBe('pending');
      expect(Date.parse(d.next_attempt_at) - clock).toBe(RETRY_DELAYS_S[attempt - 1]! * 1000);
      // Not due a moment before its time.
      clock = Date.parse(d.next_attempt_at) - 1000;
      expect(await dispatcher.runOnce({ creatorIds: [creator.id] })).toBe(0);
      clock += 1000;
    } else {
      expect(d).toMatchObject({ status: 'dead', next_attempt_at: null, last_status_code: 503 });
    }
  }
  const days = (clock - started) / 86_400_000;
  expect(days).toBeGreaterThan(2.5);
  expect(days).toBeLessThan(3.5);
  expect(receiver.received).toHaveLength(MAX_ATTEMPTS);
  expect(json(await t.app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}`, headers: creator.headers })).data.enabled).toBe(true);

  // Two days later it still fails: five days since the first failure, it is disabled.
  clock += 2 * 86_400_000;
  await t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${endpoint.id}/test`, headers: creator.headers });
  await dispatcher.runOnce({ creatorIds: [creator.id] });
  const ep = json(await t.app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}`, headers: creator.headers })).data;
  expect(ep).toMatchObject({ enabled: false, disabled_reason: 'failing' });
  await dispatcher.runOnce({ creatorIds: [creator.id] });
  expect(watcher.ofType('webhook_endpoint.disabled')).toHaveLength(1);
  expect(watcher.received[0]!.payload.data).toMatchObject({ endpoint_id: endpoint.id, reason: 'failing' });

  // Recover: every dead delivery since the start is queued again, sent once the endpoint is enabled.
  const patched = await t.app.inject({ method: 'PATCH', url: `/api/v1/webhook-endpoints/${endpoint.id}`, headers: creator.headers, payload: { enabled: true } });
  expect(json(patched).data).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
  const recovered = await t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${endpoint.id}/recover`, headers: creator.headers, payload: { since: new Date(started - 60_000).toISOString() } });
  expect(json(recovered).data.queued).toBe(1);
  await t.app.inject({ method: 'DELETE', url: `/api/v1/webhook-endpoints/${endpoint.id}`, headers: creator.headers });
  sender.close();
  await receiver.close();
  await watcher.close();
});

it('keeps delivering to other endpoints while one receiver is slow: it holds a quarter of the slots, never all of them', async () => {
  const creator = await createCreator(t);
  // The slow receiver answers after 1.2 s. Its deliveries are older, so a claim by age alone
  // would give it every slot and the fast ones would wait for it.
  const slow = await startReceiver(() => ({ status: 200 }), 1200);
  const fast = await startReceiver();
  const slowEndpoint = await createEndpoint(t, creator, { url: slow.url });
  const fastEndpoint = await createEndpoint(t, creator, { url: fast.url });
  for (let i = 0; i < 12; i++) await t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${slowEndpoint.id}/test`, headers: creator.headers });
  for (let i = 0; i < 12; i++) await t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${fastEndpoint.id}/test`, headers: creator.headers });
  const sender = createSender({ allowLoopback: true });
  const dispatcher = createDispatcher({ db: t.database.db, sender, concurrency: 8 });
  const started = Date.now();
  let fastDoneAfter = -1;
  const watch = setInterval(() => {
    if (fastDoneAfter < 0 && fast.received.length === 12) fastDoneAfter = Date.now() - started;
  }, 20);
  // Stops claiming once the fast ones are in (and waits for what it holds).
  await dispatcher.pump({ stop: () => fast.received.length === 12, creatorIds: [creator.id] });
  clearInterval(watch);
  expect(fast.received).toHaveLength(12);
  expect(fastDoneAfter).toBeGreaterThanOrEqual(0);
  expect(fastDoneAfter).toBeLessThan(1000);
  // What is left would only keep other test files' senders busy.
  for (const id of [slowEndpoint.id, fastEndpoint.id]) await t.app.inject({ method: 'DELETE', url: `/api/v1/webhook-endpoints/${id}`, headers: creator.headers });
  sender.close();
  await slow.close();
  await fast.close();
}, 30_000);

it('gives way while the node is busy: a trickle at the busy rate, then everything once it is quiet', async () => {
  const creator = await createCreator(t);
  const receiver = await startReceiver();
  const endpoint = await createEndpoint(t, creator, { url: receiver.url });
  for (let i = 0; i < 40; i++) await t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${endpoint.id}/test`, headers: creator.headers });
  const sender = createSender({ allowLoopback: true });
  let busy = true;
  // 20 a second while busy: a claim of 5 every 250 ms.
  const dispatcher = createDispatcher({ db: t.database.db, sender, busy: () => busy, busyRate: 20 });
  const started = Date.now();
  await dispatcher.pump({ stop: () => Date.now() - started > 600, creatorIds: [creator.id] });
  // Claims at 0, 250 and 500 ms (the last may just miss the stop).
  expect(receiver.received.length).toBeGreaterThanOrEqual(10);
  expect(receiver.received.length).toBeLessThanOrEqual(15);
  busy = false;
  await dispatcher.pump({ creatorIds: [creator.id] });
  expect(receiver.received).toHaveLength(40);
  await t.app.inject({ method: 'DELETE', url: `/api/v1/webhook-endpoints/${endpoint.id}`, headers: creator.headers });
  sender.close();
  await receiver.close();
});
