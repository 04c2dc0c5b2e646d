import { describe, expect, it } from 'vitest';
import type { Processor } from '../../processor/processor.js';
import { readLedger } from './ledger.js';

/**
 * The ledger's arithmetic on hand-made processor records, including broken ones: the
 * end-to-end test (payouts.test.ts) shows real records add up; this shows a wrong one is caught.
 */
async function* items<T>(list: T[]) {
  yield* list;
}

function processorWith(records: { txns: object[]; refunds?: object[]; payouts?: object[]; available: number; pending: number }) {
  return {
    balanceTransactions: () => items(records.txns),
    refunds: () => items(records.refunds ?? []),
    payouts: () => items(records.payouts ?? []),
    retrieveBalance: async () => ({ available: [{ currency: 'brl', amount: records.available }], pending: [{ currency: 'brl', amount: records.pending }] }),
  } as unknown as Processor;
}

const now = Math.floor(Date.now() / 1000);
const charge = (id: string, gross: number, fee: number) => ({ id: `txn_${id}`, type: 'charge', currency: 'brl', amount: gross, fee, net: gross - fee, source: id, created: now });

describe('ledger verification', () => {
  it('passes when charges split into net and fee and the balance accounts for every cent', async () => {
    const ledger = await readLedger(
      processorWith({
        txns: [charge('ch_1', 5000, 500), charge('ch_2', 4995, 500), { id: 'txn_r', type: 'refund', currency: 'brl', amount: -1000, fee: -100, net: -900, source: 're_1', created: now }],
        refunds: [{ id: 're_1', charge: 'ch_1', currency: 'brl' }],
        payouts: [{ currency: 'brl', amount: 3000, status: 'paid' }, { currency: 'brl', amount: 1000, status: 'in_transit' }, { currency: 'brl', amount: 700, status: 'failed' }],
        available: 1000,
        pending: 3095,
      }),
      'acct_1',
      'brl',
    );
    expect(ledger.checks.filter((c) => !c.ok)).toEqual([]);
    expect(ledger).toMatchObject({ ok: true, all_time_net_cents: 4500 + 4495 - 900 });
  });

  it('fails on a fee that is not 10 % rounded half up, a disproportionate refund, or a missing cent', async () => {
    const ledger = await readLedger(
      processorWith({
        txns: [charge('ch_1', 5000, 499), charge('ch_2', 1000, 100), { id: 'txn_r', type: 'refund', currency: 'brl', amount: -500, fee: 0, net: -500, source: 're_1', created: now }],
        refunds: [{ id: 're_1', charge: 'ch_2', currency: 'brl' }],
        available: 0,
        pending: 4900,
      }),
      'acct_1',
      'brl',
    );
    expect(ledger.ok).toBe(false);
    const failed = ledger.checks.filter((c) => !c.ok).map((c) => c.name);
    expect(failed).toEqual(expect.arrayContaining(['charge ch_1', 'refunds of ch_2', 'available + pending + paid out + in transit = all-time net']));
  });
});
