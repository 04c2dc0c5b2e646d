import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, json, uniq, type TestApp } from '../../../test/helpers.js';
import { purgeRetained } from '../../retention.js';
import { createMembersRepo } from '../members/members.repo.js';
import { createInbox, type ProcessorEvent } from './inbox.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const quiet = pino({ enabled: false });
const admin = () => ({ authorization: `Bearer ${t.adminToken}` });
const eventOf = (type: string): ProcessorEvent => ({ id: `evt_test_${uniq()}`, type, data: { object: {} } });
const rowOf = (id: string) => t.database.db.selectFrom('webhook_events').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('the webhook inbox', () => {
  it('parks an event as dead after its last allowed attempt, with its last error, instead of retrying forever', async () => {
    // A real event type about an object no processor has: every inbox sharing this database
    // (other test files poll it too, on PostgreSQL) fails it the same way.
    const type = 'customer.subscription.updated';
    const inbox = createInbox({ db: t.database.db, handlers: { [type]: () => Promise.reject(new Error('upstream said no')) }, logger: quiet, maxAttempts: 2 });
    const event: ProcessorEvent = { id: `evt_test_${uniq()}`, type, account: 'acct_nobody', data: { object: { id: 'sub_nobody', object: 'subscription' } } };
    await inbox.record(event);
    await inbox.process(event.id);
    expect(await rowOf(event.id)).toMatchObject({ dead_at: null, processed_at: null });
    expect((await rowOf(event.id)).last_error).not.toBeNull();
    await t.database.db.updateTable('webhook_events').set({ next_attempt_at: sql<Date>`now()` }).where('id', '=', event.id).execute();
    await inbox.process(event.id);
    const dead = await rowOf(event.id);
    expect(dead.attempts).toBeGreaterThanOrEqual(2);
    expect(dead.dead_at).not.toBeNull();
    expect(dead.processed_at).toBeNull();
    // Dead events are never claimed again, however due.
    await inbox.process(event.id);
    expect((await rowOf(event.id)).attempts).toBe(dead.attempts);
  });

  it('processes at most its concurrency of freshly acknowledged events at once, leaving the rest to the poller', async () => {
    let running = 0;
    let most = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const inbox = createInbox({
      db: t.database.db,
      handlers: {
        'test.slow': async () => {
          running++;
          most = Math.max(most, running);
          await gate;
          running--;
          return undefined;
        },
      },
      logger: quiet,
      maxConcurrent: 2,
    });
    const events = Array.from({ length: 5 }, () => eventOf('test.slow'));
    for (const e of events) await inbox.record(e);
    const processing = Promise.all(events.map((e) => inbox.process(e.id)));
    await new Promise((r) => setTimeout(r, 100));
    release();
    await processing;
    // Exactly 2 on an unshared database; on PostgreSQL another test file's poller may take some.
    expect(most).toBeGreaterThanOrEqual(1);
    expect(most).toBeLessThanOrEqual(2);
    // The ones it left are durable: a drain (the poller's job) takes them.
    await inbox.drain();
    const rows = await t.database.db.selectFrom('webhook_events').select('processed_at').where('id', 'in', events.map((e) => e.id)).execute();
    expect(rows.filter((r) => r.processed_at !== null)).toHaveLength(5);
  });
});

describe('dead events for operators', () => {
  it('are listed by the admin API, counted in the metrics, and put back in the queue by a retry', async () => {
    const id = `evt_dead_${uniq()}`;
    await t.database.db
      .insertInto('webhook_events')
      .values({ id, type: 'test.dead', account: null, payload: JSON.stringify(eventOf('test.dead')), attempts: 20, last_error: 'gave up', dead_at: new Date() })
      .execute();
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/admin/webhook-events?status=dead&limit=100', headers: admin() });
    expect(list.statusCode).toBe(200);
    expect(json(list).data.find((e: { id: string }) => e.id === id)).toMatchObject({ status: 'dead', attempts: 20, last_error: 'gave up', next_attempt_at: null });

    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(Number(/^webhook_events_dead (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);

    const missing = await t.app.inject({ method: 'POST', url: '/api/v1/admin/webhook-events/retry?id=evt_nope', headers: admin() });
    expect(missing.statusCode).toBe(404);
    const retried = await t.app.inject({ method: 'POST', url: `/api/v1/admin/webhook-events/retry?id=${id}`, headers: admin() });
    expect(json(retried).data).toEqual({ retried: 1 });
    expect(await rowOf(id)).toMatchObject({ dead_at: null, attempts: 0 });
  });
});

describe('retention', () => {
  it('purges processed events older than the retention and expired member tokens, keeping the rest', async () => {
    const old = `evt_old_${uniq()}`;
    const recent = `evt_recent_${uniq()}`;
    const unprocessed = `evt_unprocessed_${uniq()}`;
    const payload = JSON.stringify(eventOf('test.kept'));
    await t.database.db
      .insertInto('webhook_events')
      .values([
        { id: old, type: 'test.kept', account: null, payload, processed_at: sql<Date>`now() - interval '31 days'` },
        { id: recent, type: 'test.kept', account: null, payload, processed_at: sql<Date>`now() - interval '29 days'` },
        { id: unprocessed, type: 'test.kept', account: null, payload, next_attempt_at: sql<Date>`now() + interval '1 day'`, received_at: sql<Date>`now() - interval '40 days'` },
      ])
      .execute();
    const member = await t.database.db
      .insertInto('members')
      .values({ id: crypto.randomUUID(), name: 'Tokens', email: `tokens-${uniq()}@example.com`, password_hash: 'x' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const tokenRow = (expires: string) => ({ id: crypto.randomUUID(), member_id: member.id, token_hash: Buffer.from(uniq()), expires_at: sql<Date>`now() + ${sql.raw(`interval '${expires}'`)}` });
    await t.database.db.insertInto('member_tokens').values([tokenRow('-1 hour'), tokenRow('30 days')]).execute();

    const inbox = createInbox({ db: t.database.db, handlers: {}, logger: quiet });
    await purgeRetained(inbox, createMembersRepo(t.database.db), 30);

    const left = await t.database.db.selectFrom('webhook_events').select('id').where('id', 'in', [old, recent, unprocessed]).execute();
    expect(left.map((r) => r.id).sort()).toEqual([recent, unprocessed].sort());
    const tokens = await t.database.db.selectFrom('member_tokens').select(sql<boolean>`expires_at > now()`.as('live')).where('member_id', '=', member.id).execute();
    expect(tokens).toEqual([{ live: true }]);
  });
});
