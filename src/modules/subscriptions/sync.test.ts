import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, openCheckout, pay, subscriptionsOf } from '../../../test/billing-kit.js';
import { buildTestApp, createCreator, createMember, json, uniq, type TestApp } from '../../../test/helpers.js';
import { communityWithTiers } from '../../../test/members-kit.js';
import { createSubscriptionSync } from './sync.js';

let t: TestApp;
beforeAll(async () => {
  // Webhooks on: the subscription the race starts from is mirrored from its checkout's events.
  t = await buildTestApp({ webhooks: true });
});
afterAll(() => t.close());

describe('the subscription mirror', () => {
  it('records one change when two reads of a subscription it has not seen yet are applied at once', async () => {
    const creator = await createCreator(t);
    const { tiers } = await communityWithTiers(t, creator, ['Mensal']);
    const member = await createMember(t);
    const opened = await openCheckout(t, member, tiers[0]!.id);
    expect((await pay(t, json(opened).data.processor_session_id)).status).toBe(200);
    let processorId = '';
    await eventually(t, async () => {
      const [sub] = await subscriptionsOf(t, creator, `?member_id=${member.id}`);
      expect(sub).toBeDefined();
      processorId = sub!.processor_subscription_id as string;
    });
    const db = t.database.db;
    const account = (await db.selectFrom('creators').select('processor_account_id').where('id', '=', creator.id).executeTakeFirstOrThrow()).processor_account_id!;
    const sync = createSubscriptionSync({ db, processor: t.processor, logger: pino({ level: 'silent' }) });
    // A real read of the processor, under an id the mirror has never seen: a new subscription
    // whose events (checkout completed, subscription created, invoice paid) arrive together.
    const read = await sync.read(account, processorId);
    const fresh = { ...read.subscription, id: `sub_race_${uniq()}` };

    // The first writer has inserted the row and not committed when the second one starts.
    let firstApplied!: () => void;
    const applied = new Promise<void>((resolve) => (firstApplied = resolve));
    let commitFirst!: () => void;
    const mayCommit = new Promise<void>((resolve) => (commitFirst = resolve));
    const first = db.transaction().execute(async (trx) => {
      await sync.apply(trx, account, { seq: read.seq, subscription: fresh });
      firstApplied();
      await mayCommit;
    });
    await applied;
    const second = db.transaction().execute((trx) => sync.apply(trx, account, { seq: read.seq + 1, subscription: fresh }));
    await new Promise((r) => setTimeout(r, 200));
    commitFirst();
    const [, secondResult] = await Promise.all([first, second]);
    expect(secondResult?.changed).toBe(false);

    const { rows } = await sql<{ status: string }>`select c.status from subscription_changes c join subscriptions s on s.id = c.subscription_id
      where s.processor_subscription_id = ${fresh.id}`.execute(db);
    expect(rows.map((r) => r.status)).toEqual(['active']);
  });
});
