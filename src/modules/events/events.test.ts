import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { communityWithMember, createEndpoint, startReceiver, verified } from '../../../test/events-kit.js';
import { BENCH_PRESS_ID, buildTestApp, createCreator, json, mintMember, type TestApp, type TestMember } from '../../../test/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

let minutes = 0;
const at = () => new Date(Date.UTC(2026, 0, 1) + ++minutes * 60_000).toISOString();
const log = (member: TestMember, communityId: string | null, loadKg: number) =>
  t.app.inject({
    method: 'POST',
    url: '/api/v1/member/workout-logs',
    headers: member.headers,
    payload: { performed_at: at(), ...(communityId ? { community_id: communityId } : {}), sets: [{ exercise_id: BENCH_PRESS_ID, reps: 5, load_kg: loadKg }] },
  });

describe('webhook endpoints', () => {
  it('shows the signing secret once, at creation, and never again', async () => {
    const creator = await createCreator(t);
    const receiver = await startReceiver();
    const created = await createEndpoint(t, creator, { url: receiver.url, description: 'Welcome e-mails' });
    expect(created).toMatchObject({ url: receiver.url, events: ['*'], enabled: true, description: 'Welcome e-mails', disabled_reason: null });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    const got = json(await t.app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${created.id}`, headers: creator.headers })).data;
    expect(got).not.toHaveProperty('secret');
    expect(JSON.stringify(json(await t.app.inject({ method: 'GET', url: '/api/v1/webhook-endpoints', headers: creator.headers })))).not.toContain(created.secret);
    await receiver.close();
  });

  it('refuses URLs that are not public https, saying which rule they break', async () => {
    const creator = await createCreator(t);
    for (const [url, message] of [
      ['http://hooks.example.com/x', /https/],
      ['https://10.0.0.7/x', /private/],
      ['https://169.254.169.254/latest', /private/],
      ['https://intranet.local/x', /local network name/],
      ['https://user:pw@hooks.example.com/x', /user name or password/],
      ['not a url', /complete web address/],
    ] as const) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: creator.headers, payload: { url } });
      expect(res.statusCode, url).toBe(400);
      expect(json(res).error.details[0]).toMatchObject({ field: 'url', message: expect.stringMatching(message) });
    }
    const unknownType = await t.app.inject({ method: 'POST', url: '/api/v1/webhook-endpoints', headers: creator.headers, payload: { url: 'https://hooks.example.com/x', events: ['member.teleported'] } });
    expect(unknownType.statusCode).toBe(400);
  });

  it("answers another creator's endpoint as not found", async () => {
    const owner = await createCreator(t);
    const other = await createCreator(t);
    const endpoint = await createEndpoint(t, owner, { url: 'https://hooks.example.com/a' });
    for (const [method, url] of [
      ['GET', `/api/v1/webhook-endpoints/${endpoint.id}`],
      ['PATCH', `/api/v1/webhook-endpoints/${endpoint.id}`],
      ['DELETE', `/api/v1/webhook-endpoints/${endpoint.id}`],
      ['POST', `/api/v1/webhook-endpoints/${endpoint.id}/test`],
      ['GET', `/api/v1/webhook-endpoints/${endpoint.id}/deliveries`],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: other.headers, ...(method === 'PATCH' ? { payload: { enabled: false } } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
  });
});

describe('delivering events', () => {
  it('delivers a logged workout and its PRs signed as Standard Webhooks, and nothing for a personal log', async () => {
    const creator = await createCreator(t);
    const { communityId, member } = await communityWithMember(t, creator);
    const receiver = await startReceiver();
    const endpoint = await createEndpoint(t, creator, { url: receiver.url, events: ['workout.logged', 'pr.achieved'] });
    expect((await log(member, communityId, 60)).statusCode).toBe(201);
    const second = await log(member, communityId, 70);
    expect(second.statusCode).toBe(201);
    expect((await log(member, null, 80)).statusCode).toBe(201);
    await t.app.events.drain({ creatorIds: [creator.id] });

    const logged = receiver.ofType('workout.logged').map((r) => verified(endpoint.secret, r));
    expect(logged).toHaveLength(2);
    expect(logged[1]!.data).toEqual({
      log_id: json(second).data.id,
      member_id: member.id,
      community_id: communityId,
      workout_id: null,
      performed_at: json(second).data.performed_at,
      sets_count: 1,
      prs_count: json(second).data.prs.length,
    });
    const prs = receiver.ofType('pr.achieved').map((r) => verified(endpoint.secret, r));
    expect(prs.map((p) => [p.data.kind, p.data.value, p.data.previous_value])).toEqual(
      expect.arrayContaining([
        ['max_load', 70, 60],
        ['est_1rm', 81.67, 70],
      ]),
    );
    expect(prs[0]!.data).toMatchObject({ exercise_name: 'Barbell Bench Press', member_id: member.id, log_id: json(second).data.id });
    // Each event once, with an id of its own that every attempt would carry.
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(receiver.received.length);
    await receiver.close();
  });

  it("sends nothing for a change that did not happen, nor to another creator's endpoint", async () => {
    const creator = await createCreator(t);
    const other = await createCreator(t);
    const { communityId } = await communityWithMember(t, creator);
    const outsider = await mintMember(t);
    const receiver = await startReceiver();
    await createEndpoint(t, other, { url: receiver.url });
    await createEndpoint(t, creator, { url: receiver.url, events: ['pr.achieved'] });
    // Refused (no live subscription): nothing is written, so nothing is sent.
    expect((await log(outsider, communityId, 60)).statusCode).toBe(403);
    await t.app.events.drain({ creatorIds: [creator.id, other.id] });
    expect(receiver.received).toEqual([]);
    await receiver.close();
  });

  it('retries a failing endpoint on the schedule, logs each attempt, and sends it again on request', async () => {
    const creator = await createCreator(t);
    const { communityId, member } = await communityWithMember(t, creator);
    let status = 500;
    const receiver = await startReceiver(() => ({ status, body: `answer ${status}` }));
    const endpoint = await createEndpoint(t, creator, { url: receiver.url, events: ['workout.logged'] });
    await log(member, communityId, 60);
    await t.app.events.drain({ creatorIds: [creator.id] });
    const list = json(await t.app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}/deliveries`, headers: creator.headers }));
    expect(list.data).toHaveLength(1);
    const [delivery] = list.data;
    expect(delivery).toMatchObject({ event_type: 'workout.logged', status: 'pending', attempts: 1, last_status_code: 500 });
    const wait = Date.parse(delivery.next_attempt_at) - Date.parse(delivery.last_attempt_at);
    expect(wait).toBeGreaterThanOrEqual(4_500);
    expect(wait).toBeLessThanOrEqual(5_500);
    const detail = json(await t.app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}`, headers: creator.headers })).data;
    expect(detail.attempts_log).toEqual([expect.objectContaining({ status_code: 500, response_body: 'answer 500', error: null })]);
    expect(detail.payload).toMatchObject({ type: 'workout.logged', data: { member_id: member.id } });
    const ep = json(await t.app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}`, headers: creator.headers })).data;
    expect(ep.failing_since).not.toBeNull();

    // Not due for 5 s; a retry asked for goes now, with the same webhook-id.
    await t.app.events.drain({ creatorIds: [creator.id] });
    expect(receiver.received).toHaveLength(1);
    status = 204;
    const retried = await t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}/retry`, headers: creator.headers });
    expect(retried.statusCode, retried.body).toBe(200);
    await t.app.events.drain({ creatorIds: [creator.id] });
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    const after = json(await t.app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}`, headers: creator.headers })).data;
    expect(after).toMatchObject({ status: 'succeeded', attempts: 2, last_status_code: 204, next_attempt_at: null });
    const healed = json(await t.app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}`, headers: creator.headers })).data;
    expect(healed.failing_since).toBeNull();
    await receiver.close();
  });

  it('disables an endpoint that answers 410 and tells the creator through their other endpoints', async () => {
    const creator = await createCreator(t);
    const gone = await startReceiver(() => ({ status: 410 }));
    const watcher = await startReceiver();
    const goneEndpoint = await createEndpoint(t, creator, { url: gone.url });
    const watcherEndpoint = await createEndpoint(t, creator, { url: watcher.url, events: ['webhook_endpoint.disabled'] });
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${goneEndpoint.id}/test`, headers: creator.headers })).statusCode).toBe(201);
    await t.app.events.drain({ creatorIds: [creator.id] });
    const ep = json(await t.app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${goneEndpoint.id}`, headers: creator.headers })).data;
    expect(ep).toMatchObject({ enabled: false, disabled_reason: 'gone' });
    const [told] = watcher.received.map((r) => verified(watcherEndpoint.secret, r));
    expect(told).toMatchObject({ type: 'webhook_endpoint.disabled', data: { endpoint_id: goneEndpoint.id, reason: 'gone' } });
    const test = await t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${goneEndpoint.id}/test`, headers: creator.headers });
    expect(test.statusCode).toBe(409);
    expect(json(test).error.code).toBe('endpoint_disabled');
    await gone.close();
    await watcher.close();
  });

  it('signs with the old and the new secret for a day after a rotation', async () => {
    const creator = await createCreator(t);
    const receiver = await startReceiver();
    const endpoint = await createEndpoint(t, creator, { url: receiver.url });
    const rotated = await t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, headers: creator.headers });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const newSecret = json(rotated).data.secret as string;
    expect(newSecret).not.toBe(endpoint.secret);
    expect(json(rotated).data.secret_rotated_at).not.toBeNull();
    await t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${endpoint.id}/test`, headers: creator.headers });
    await t.app.events.drain({ creatorIds: [creator.id] });
    const [ping] = receiver.received;
    expect(ping!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verified(newSecret, ping!).type).toBe('ping');
    expect(verified(endpoint.secret, ping!).type).toBe('ping');
    await receiver.close();
  });
});

describe('retention', () => {
  it('deletes events older than 30 days with their deliveries, but keeps one still waiting to be sent', async () => {
    const creator = await createCreator(t);
    const receiver = await startReceiver();
    const endpoint = await createEndpoint(t, creator, { url: receiver.url });
    for (let i = 0; i < 2; i++) await t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${endpoint.id}/test`, headers: creator.headers });
    await t.app.events.drain({ creatorIds: [creator.id] });
    await t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${endpoint.id}/test`, headers: creator.headers });
    // All three 31 days old; the third never sent (still pending).
    await t.database.db.updateTable('events').set({ created_at: new Date(Date.now() - 31 * 86_400_000) }).where('creator_id', '=', creator.id).execute();
    expect(await t.app.events.purge()).toBeGreaterThanOrEqual(2);
    const left = json(await t.app.inject({ method: 'GET', url: `/api/v1/webhook-endpoints/${endpoint.id}/deliveries`, headers: creator.headers })).data;
    expect(left.map((d: { status: string }) => d.status)).toEqual(['pending']);
    await receiver.close();
  });
});

describe('operations', () => {
  it('shows the deliveries due and the dead ones in the Prometheus metrics', async () => {
    const creator = await createCreator(t);
    const receiver = await startReceiver(() => ({ status: 410 }));
    const endpoint = await createEndpoint(t, creator, { url: receiver.url });
    await t.app.inject({ method: 'POST', url: `/api/v1/webhook-endpoints/${endpoint.id}/test`, headers: creator.headers });
    const gauge = async (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec((await t.app.inject({ method: 'GET', url: '/metrics' })).body)?.[1]);
    expect(await gauge('outgoing_deliveries_due')).toBeGreaterThanOrEqual(1);
    await t.app.events.drain({ creatorIds: [creator.id] });
    expect(await gauge('outgoing_deliveries_dead')).toBeGreaterThanOrEqual(1);
    await receiver.close();
  });
});
