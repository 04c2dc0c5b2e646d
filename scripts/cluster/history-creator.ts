import type { ProofContext } from './context.js';
import { created, makeCreator, payingMembers } from './setup.js';

/**
 * A second creator for the metrics-history count: two members paying a monthly tier, their
 * subscriptions dated `days` days back in the mirror, from now on the database's clock (the
 * only way to give a creator made today a past: the history is of finished days; the
 * processor's clock, which dates them, runs days ahead since the set-up advanced it). The job then owes `days` days for each of
 * its two scopes (all communities, the one community), each with both members paying.
 */

const PRICE_CENTS = 2500;
const MEMBERS = 2;

export interface HistoryCreator {
  members: number;
  mrrCents: number;
  expectedRows: number;
  rows(): Promise<Array<{ scope: string; day: string; active_subscribers: number; mrr_cents: number }>>;
}

export async function makeHistoryCreator(ctx: ProofContext, days: number): Promise<HistoryCreator> {
  const { lbUrl, env } = ctx.cluster;
  const creator = await makeCreator(lbUrl, env.simPort, env.adminToken, 'history', true);
  const auth = creator.authorization;
  const community = await created(lbUrl, '/api/v1/communities', { auth, body: { name: 'History Gym', slug: `cluster-${ctx.data.runId}-history`, category: 'musculacao' } });
  const tier = await created(lbUrl, '/api/v1/tiers', { auth, body: { community_id: community.id, name: 'Monthly', price_cents: PRICE_CENTS, billing_period: 'monthly' } });
  await payingMembers(lbUrl, env.simPort, { auth, tierId: tier.id, label: `${ctx.data.runId}-history`, count: MEMBERS });
  await ctx.db.query(`update subscriptions set created_at = now() - make_interval(days => $2) where creator_id = $1`, [creator.id, days]);
  return {
    members: MEMBERS,
    mrrCents: MEMBERS * PRICE_CENTS,
    expectedRows: days * 2,
    rows: async () =>
      (
        await ctx.db.query(
          `select coalesce(community_id::text, 'all') as scope, day::text as day, active_subscribers, mrr_cents::int as mrr_cents
             from metrics_daily where creator_id = $1 order by 1, 2`,
          [creator.id],
        )
      ).rows,
  };
}
