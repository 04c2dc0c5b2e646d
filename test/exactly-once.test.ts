import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toAppError } from '../src/http/error-handler.js';
import { processorFailure } from '../src/processor/errors.js';
import { wasReplayed } from '../src/processor/processor.js';
import { advanceDays, eventually, subscribe, type Subscribed } from './billing-kit.js';
import { buildTestApp, createCommunity, createCreator, createMember, createTier, json, uniq, type TestApp, type TestCreator } from './helpers.js';

/**
 * Exactly once across failures: a keyed request whose local write fails after the processor
 * acted (a statement timeout, a failover) answers 5xx; its retry with the same key must get
 * what the processor did the first time, never a second refund, payout, product, account or
 * checkout session. And an answer is stored in the transaction of its effect, so one never
 * exists without the other.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ webhooks: true });
  // Fails the next write of a row that matches, once, as a statement timeout would (SQLSTATE
  // 57014 → 503). Rows of other tests never match. "Once" is counted by a sequence, which a
  // rollback does not undo (the failed transaction rolls back everything else it did).
  await sql`create table if not exists test_fail_once (table_name text not null, match text not null, fail_at bigint not null)`.execute(t.database.db);
  await sql`create sequence if not exists test_fail_once_seq`.execute(t.database.db);
  await sql`create or replace function test_fail_once() returns trigger language plpgsql as $$
    declare
      armed bigint;
    begin
      -- A second argument names a column the row must have filled to count.
      if tg_nargs > 1 and to_jsonb(new) ->> tg_argv[1] is null then return new; end if;
      -- A partition's row (idempotency_keys, by hour) is armed by its partitioned table's name.
      select fail_at into armed from test_fail_once
      where table_name = coalesce((select c.relname from pg_class c where c.oid = pg_partition_root(tg_relid)), tg_table_name)
        and match = to_jsonb(new) ->> tg_argv[0];
      if armed is not null and nextval('test_fail_once_seq') = armed then
        raise exception 'injected failure' using errcode = '57014';
      end if;
      return new;
    end $$`.execute(t.database.db);
  for (const [table, column] of [
    ['refunds', 'creator_id'],
    ['payouts', 'creator_id'],
    ['tiers', 'creator_id'],
    ['creators', 'email'],
    ['checkout_sessions', 'member_id'],
    ['communities', 'creator_id'],
    ['idempotency_keys', "scope', 'response_body"], // the write that stores the answer
  ] as const) {
    await sql
      .raw(`create or replace trigger test_fail_once before insert or update on ${table} for each row execute function test_fail_once('${column}')`)
      .execute(t.database.db);
  }
});
afterAll(() => t.close());

const failNextWrite = (table: string, match: string) =>
  sql`insert into test_fail_once (table_name, match, fail_at) values (${table}, ${match}, nextval('test_fail_once_seq') + 1)`.execute(t.database.db);

const post = (url: string, headers: Record<string, string>, key: string, payload: object) =>
  t.app.inject({ method: 'POST', url, headers: { ...headers, 'idempotency-key': key }, payload });

/** Fails the first attempt's local write, then retries with the same key: 503, then `status`. */
async function failThenRetry(table: string, match: string, send: () => ReturnType<typeof post>, opts: { secret?: 'api_key' } = {}) {
  const status = 201;
  await failNextWrite(table, match);
  const first = await send();
  expect(first.statusCode, first.body).toBe(503);
  const retry = await send();
  expect(retry.statusCode, retry.body).toBe(status);
  expect(retry.headers['idempotent-replayed']).toBeUndefined();
  const replay = await send();
  expect(replay.headers['idempotent-replayed']).toBe('true');
  // A secret is never stored, so its replay answers it as null.
  if (opts.secret) expect(json(replay).data).toEqual({ ...json(retry).data, [opts.secret]: null });
  else expect(replay.body).toBe(retry.body);
  return json(retry).data;
}

const accountOf = async (creator: TestCreator) =>
  (await t.database.db.selectFrom('creators').select('processor_account_id').where('id', '=', creator.id).executeTakeFirstOrThrow()).processor_account_id!;

describe('a keyed request whose local write fails after the processor acted', () => {
  it('refunds once when retried with the same key', async () => {
    const s = await subscribe(t, { priceCents: 5000 });
    const send = () => post(`/api/v1/subscriptions/${s.subscription.id}/refund`, s.creator.headers, 'refund-1', { amount_cents: 1000 });
    const refund = await failThenRetry('refunds', s.creator.id, send);
    const atProcessor = await t.stripe.refunds.list({ limit: 100 }, { stripeAccount: s.account });
    expect(atProcessor.data.map((r) => r.amount)).toEqual([1000]);
    expect(refund.processor_refund_id).toBe(atProcessor.data[0]!.id);
  });

  it('pays out once when retried with the same key', async () => {
    const s = await funded(5000);
    const send = () => post('/api/v1/payouts/manual', s.creator.headers, 'payout-1', { amount_cents: 3000 });
    const payout = await failThenRetry('payouts', s.creator.id, send);
    const atProcessor = await t.stripe.payouts.list({ limit: 100 }, { stripeAccount: s.account });
    expect(atProcessor.data.map((p) => p.amount)).toEqual([3000]);
    expect(payout.processor_payout_id).toBe(atProcessor.data[0]!.id);
  });

  it('creates one product and price for a tier when retried with the same key', async () => {
    const creator = await createCreator(t);
    const community = await createCommunity(t, creator);
    const body = { community_id: community.id, name: 'Gold', price_cents: 2900, billing_period: 'monthly' };
    const tier = await failThenRetry('tiers', creator.id, () => post('/api/v1/tiers', creator.headers, 'tier-1', body));
    const products = await t.stripe.products.list({ limit: 100 }, { stripeAccount: await accountOf(creator) });
    expect(products.data.map((p) => p.id)).toEqual([tier.processor_product_id]);
    expect(products.data[0]!.active).toBe(true);
  });

  it('archives the product and price of a tier whose write failed without a key', async () => {
    const creator = await createCreator(t);
    const community = await createCommunity(t, creator);
    await failNextWrite('tiers', creator.id);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/tiers', headers: creator.headers, payload: { community_id: community.id, name: 'Gold', price_cents: 2900, billing_period: 'monthly' } });
    expect(res.statusCode).toBe(503);
    const account = await accountOf(creator);
    const products = await t.stripe.products.list({ limit: 100 }, { stripeAccount: account });
    const prices = await t.stripe.prices.list({ limit: 100 }, { stripeAccount: account });
    expect(products.data.map((p) => p.active)).toEqual([false]);
    expect(prices.data.map((p) => p.active)).toEqual([false]);
  });

  it('opens one connected account for a creator when retried with the same key', async () => {
    const email = `once-${uniq()}@example.com`;
    const admin = { authorization: `Bearer ${t.adminToken}` };
    const created = await failThenRetry('creators', email, () => post('/api/v1/admin/creators', admin, 'creator-1', { name: 'Once', email }), {
      secret: 'api_key',
    });
    const accounts = await t.stripe.accounts.list({ limit: 100 });
    expect(accounts.data.filter((a) => a.email === email).map((a) => a.id)).toEqual([created.creator.processor_account_id]);
  });

  it('closes the connected account of a creator whose write failed without a key', async () => {
    const email = `orphan-${uniq()}@example.com`;
    await failNextWrite('creators', email);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/admin/creators', headers: { authorization: `Bearer ${t.adminToken}` }, payload: { name: 'Orphan', email } });
    expect(res.statusCode).toBe(503);
    const accounts = await t.stripe.accounts.list({ limit: 100 });
    expect(accounts.data.filter((a) => a.email === email)).toEqual([]);
  });

  it('opens one checkout session when retried with the same key', async () => {
    const creator = await createCreator(t);
    const community = await createCommunity(t, creator);
    const tier = await createTier(t, creator, community.id);
    const member = await createMember(t);
    const session = await failThenRetry('checkout_sessions', member.id, () => post('/api/v1/member/checkout-sessions', member.headers, 'checkout-1', { tier_id: tier.id }));
    const atProcessor = await t.stripe.checkout.sessions.list({ limit: 100 }, { stripeAccount: await accountOf(creator) });
    expect(atProcessor.data.map((c) => c.id)).toEqual([session.processor_session_id]);
  });
});

describe('the stored answer and the effect commit together', () => {
  it('keeps no community when its answer cannot be stored, and the retry creates it once', async () => {
    const creator = await createCreator(t);
    const body = { name: 'Together', slug: `together-${uniq()}`, category: 'yoga' };
    await failThenRetry('idempotency_keys', `creator:${creator.id}`, () => post('/api/v1/communities', creator.headers, 'together', body));
    const rows = await t.database.db.selectFrom('communities').select('id').where('creator_id', '=', creator.id).execute();
    expect(rows).toHaveLength(1);
  });

  it('keeps no workout log when its answer cannot be stored, and the retry logs it once', async () => {
    const member = await createMember(t);
    const [exercise] = await t.database.db.selectFrom('exercises').select('id').where('creator_id', 'is', null).limit(1).execute();
    const body = { performed_at: new Date(Date.now() - 60_000).toISOString(), sets: [{ exercise_id: exercise!.id, reps: 5, load_kg: 100 }] };
    await failThenRetry('idempotency_keys', `member:${member.id}`, () => post('/api/v1/member/workout-logs', member.headers, 'log-1', body));
    const rows = await t.database.db.selectFrom('workout_logs').select('id').where('member_id', '=', member.id).execute();
    expect(rows).toHaveLength(1);
  });
});

describe('processor answers', () => {
  it('are known as replayed when the processor answered the key before (the object is as it was then)', async () => {
    const creator = await createCreator(t);
    const opts = { stripeAccount: await accountOf(creator), idempotencyKey: `replay-${uniq()}` };
    const first = await t.stripe.products.create({ name: 'Once' }, opts);
    const again = await t.stripe.products.create({ name: 'Once' }, opts);
    expect(again.id).toBe(first.id);
    expect([wasReplayed(first), wasReplayed(again)]).toEqual([false, true]);
  });
});

describe('processor failures', () => {
  it('say that nothing changed only when the processor refused', () => {
    expect(toAppError(processorFailure('refund the payment', { type: 'StripeInvalidRequestError', statusCode: 400, message: 'No such charge' }))?.message).toBe(
      'The payment processor refused to refund the payment: No such charge. Nothing was changed.',
    );
    for (const unknown of [{ type: 'StripeConnectionError', message: 'Request aborted due to timeout being reached' }, { type: 'StripeAPIError', statusCode: 500 }]) {
      const message = toAppError(processorFailure('refund the payment', unknown))!.message;
      expect(message).toContain('may have done it');
      expect(message).not.toContain('Nothing was changed');
    }
  });
});

/** A creator whose member paid `priceCents`, on a manual schedule, with the funds available. */
async function funded(priceCents: number): Promise<Subscribed> {
  const s = await subscribe(t, { priceCents, billingPeriod: 'yearly' });
  await t.stripe.accounts.update(s.account, { settings: { payouts: { schedule: { interval: 'manual' } } } });
  await eventually(t, async () => {
    const row = await t.database.db.selectFrom('creators').select('payout_schedule').where('id', '=', s.creator.id).executeTakeFirstOrThrow();
    expect(row.payout_schedule).toBe('manual');
  });
  await advanceDays(t, 8);
  return s;
}
