import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { buildTestApp, createCreator, type TestApp } from '../../../test/helpers.js';
import { createPayoutSync } from './payout-sync.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

const payoutOf = (id: string, status: Stripe.Payout['status']): Stripe.Payout =>
  ({ id, object: 'payout', amount: 12_345, currency: 'brl', status, automatic: true, arrival_date: 1_800_000_000, created: 1_799_900_000, failure_code: null, failure_message: null }) as unknown as Stripe.Payout;

describe('the payout mirror', () => {
  // Two transactions interleaving needs two connections: the embedded database has one, and
  // runs them one after the other anyway.
  it.skipIf(!inject('postgresUrl'))('reports a payout seen for the first time by two reads at once as one change, not two', async () => {
    const creator = await createCreator(t);
    const { processor_account_id: account } = await t.database.db.selectFrom('creators').select('processor_account_id').where('id', '=', creator.id).executeTakeFirstOrThrow();
    let seq = 1_000_000;
    const sync = createPayoutSync({ db: t.database.db, processor: t.processor, sync: { nextSeq: async () => ++seq } });
    const payout = payoutOf(`po_first_${creator.id.slice(0, 8)}`, 'pending');
    let firstApplied!: () => void;
    const applied = new Promise<void>((resolve) => (firstApplied = resolve));
    // The first read is written but not committed until the second has started on its own connection.
    const first = t.database.db.transaction().execute(async (trx) => {
      const result = await sync.apply(trx, account!, 1, payout);
      firstApplied();
      await new Promise((resolve) => setTimeout(resolve, 300));
      return result;
    });
    await applied;
    const second = t.database.db.transaction().execute((trx) => sync.apply(trx, account!, 2, payout));
    const results = await Promise.all([first, second]);
    expect(results.map((r) => r?.changed)).toEqual([true, false]);
    const rows = await t.database.db.selectFrom('payouts').select(['status', 'synced_seq']).where('processor_payout_id', '=', payout.id).execute();
    expect(rows).toEqual([{ status: 'pending', synced_seq: expect.anything() }]);
    expect(Number(rows[0]!.synced_seq)).toBe(2);
  });
});
