import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceDays, pay, openCheckout, subscriptionsOf } from '../../../test/billing-kit.js';
import { buildTestApp, createCommunity, createCreator, createTier, json, mintMember, type TestApp, type TestCreator } from '../../../test/helpers.js';

/**
 * A community's status is the desired state of its live subscriptions: paused → set to cancel
 * at period end, active → not, unless the creator canceled one (that always wins). Pause,
 * resume, creator cancels, renewals and crashes may come in any order; propagation and
 * reconciliation converge every subscription to it.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ webhooks: true });
});
afterAll(() => t.close());

interface Tribe {
  creator: TestCreator;
  communityId: string;
  account: string;
  /** Subscription ids (ours) and their processor ids. */
  subs: Array<{ id: string; processorId: string }>;
}

async function tribeWith(members: number): Promise<Tribe> {
  const creator = await createCreator(t);
  const community = await createCommunity(t, creator);
  const tier = await createTier(t, creator, community.id, { price_cents: 2000, billing_period: 'monthly' });
  for (let i = 0; i < members; i++) {
    const opened = await openCheckout(t, await mintMember(t), tier.id);
    await pay(t, json(opened).data.processor_session_id);
  }
  const subs = (await subscriptionsOf(t, creator)).map((s) => ({ id: s.id as string, processorId: s.processor_subscription_id as string }));
  expect(subs).toHaveLength(members);
  const account = (await t.database.db.selectFrom('creators').select('processor_account_id').where('id', '=', creator.id).executeTakeFirstOrThrow()).processor_account_id!;
  return { creator, communityId: community.id, account, subs };
}

/**
 * Ends a tribe's business at the processor once its test has checked it: its subscriptions
 * canceled now and its payouts made manual. The simulator's clock is one for the whole file,
 * so otherwise every later "renew" (a month's advance) would renew and pay out every tribe
 * made before, not only the one under test.
 */
async function retire(x: Tribe) {
  const opts = { stripeAccount: x.account };
  for (const s of x.subs) {
    if ((await t.stripe.subscriptions.retrieve(s.processorId, {}, opts)).status !== 'canceled') await t.stripe.subscriptions.cancel(s.processorId, {}, opts);
  }
  await t.stripe.accounts.update(x.account, { settings: { payouts: { schedule: { interval: 'manual' } } } });
  await t.app.tasks.idle();
}

const pause = (x: Tribe) => t.app.inject({ method: 'DELETE', url: `/api/v1/communities/${x.communityId}`, headers: x.creator.headers });
const resume = (x: Tribe) => t.app.inject({ method: 'POST', url: `/api/v1/communities/${x.communityId}/resume`, headers: x.creator.headers });
const cancel = (x: Tribe, id: string) =>
  t.app.inject({ method: 'POST', url: `/api/v1/subscriptions/${id}/cancel`, headers: x.creator.headers, payload: { reason: 'asked' } });

/** cancel_at_period_end of each live subscription at the processor, and in the mirror. */
async function states(x: Tribe) {
  const out: Array<{ id: string; atProcessor: boolean; mirrored: boolean }> = [];
  for (const s of x.subs) {
    const atProcessor = await t.stripe.subscriptions.retrieve(s.processorId, {}, { stripeAccount: x.account });
    if (!['trialing', 'active', 'past_due'].includes(atProcessor.status)) continue;
    const row = await t.database.db.selectFrom('subscriptions').select('cancel_at_period_end').where('id', '=', s.id).executeTakeFirstOrThrow();
    out.push({ id: s.id, atProcessor: atProcessor.cancel_at_period_end, mirrored: row.cancel_at_period_end });
  }
  return out;
}

describe('pause and resume', () => {
  it('leave no subscription set to cancel when a community is resumed right after its pause', async () => {
    const x = await tribeWith(4);
    expect((await pause(x)).statusCode).toBe(200);
    expect((await resume(x)).statusCode).toBe(200);
    await t.app.tasks.idle();
    expect(await states(x)).toEqual(x.subs.map((s) => ({ id: s.id, atProcessor: false, mirrored: false })));
    await retire(x);
  });

  it("never undo a creator's own cancel made during the pause", async () => {
    const x = await tribeWith(2);
    await pause(x);
    await t.app.tasks.idle();
    expect((await cancel(x, x.subs[0]!.id)).statusCode).toBe(200);
    await resume(x);
    await t.app.tasks.idle();
    expect(await states(x)).toEqual([
      { id: x.subs[0]!.id, atProcessor: true, mirrored: true },
      { id: x.subs[1]!.id, atProcessor: false, mirrored: false },
    ]);
    await retire(x);
  });

  it('are finished by reconciliation when the process died before carrying a resume to the processor', async () => {
    const x = await tribeWith(2);
    await pause(x);
    await t.app.tasks.idle();
    // The resume committed, then the process died before its background task ran.
    await t.database.db.updateTable('communities').set({ status: 'active', paused_at: null }).where('id', '=', x.communityId).execute();
    await t.app.reconciler.run({ creatorId: x.creator.id });
    expect(await states(x)).toEqual(x.subs.map((s) => ({ id: s.id, atProcessor: false, mirrored: false })));
    await retire(x);
  });
});

describe('pause convergence', () => {
  it('brings every live subscription to the community status, with creator cancels kept, whatever the interleaving', async () => {
    const action = fc.oneof(
      fc.constant({ kind: 'pause' as const }),
      fc.constant({ kind: 'resume' as const }),
      fc.record({ kind: fc.constant('cancel' as const), sub: fc.nat(2) }),
      fc.constant({ kind: 'renew' as const }),
      fc.record({ kind: fc.constant('crash' as const), calls: fc.integer({ min: 1, max: 3 }) }),
    );
    const plan = fc.array(fc.record({ action, startAfterMs: fc.nat(15) }), { minLength: 2, maxLength: 7 });
    const original = t.processor.setCancelAtPeriodEnd;
    await fc.assert(
      fc.asyncProperty(plan, fc.array(fc.nat(20), { minLength: 16, maxLength: 16 }), async (steps, delays) => {
        const x = await tribeWith(3);
        // Processor calls land in shuffled order (random delays); a "crash" makes the next
        // calls fail, leaving propagation half done (marked, not carried), as a dying process would.
        let call = 0;
        let failing = 0;
        t.processor.setCancelAtPeriodEnd = async (...args) => {
          await new Promise((r) => setTimeout(r, delays[call++ % delays.length]));
          if (failing > 0) {
            failing--;
            throw new Error('the process died here');
          }
          return original.apply(t.processor, args);
        };
        try {
          await Promise.all(
            steps.map(async ({ action: a, startAfterMs }) => {
              await new Promise((r) => setTimeout(r, startAfterMs));
              if (a.kind === 'pause') await pause(x);
              else if (a.kind === 'resume') await resume(x);
              else if (a.kind === 'cancel') await cancel(x, x.subs[a.sub]!.id);
              else if (a.kind === 'renew') await advanceDays(t, 31);
              else failing += a.calls;
            }),
          );
          await t.app.tasks.idle();
        } finally {
          t.processor.setCancelAtPeriodEnd = original;
        }
        // What a crash left, reconciliation finishes.
        await t.app.reconciler.run({ creatorId: x.creator.id });
        await t.app.tasks.idle();
        const paused = (await t.database.db.selectFrom('communities').select('status').where('id', '=', x.communityId).executeTakeFirstOrThrow()).status === 'paused';
        const canceledByCreator = new Set(
          (await t.database.db.selectFrom('subscriptions').select('id').where('community_id', '=', x.communityId).where('canceled_by_creator', '=', true).execute()).map((r) => r.id),
        );
        for (const s of await states(x)) {
          const wanted = paused || canceledByCreator.has(s.id);
          expect({ ...s, paused, creatorCanceled: canceledByCreator.has(s.id) }).toEqual({ ...s, atProcessor: wanted, mirrored: wanted, paused, creatorCanceled: canceledByCreator.has(s.id) });
        }
        await retire(x);
      }),
      { numRuns: 8 },
    );
  }, 120_000);
});
