import { sql } from 'kysely';
import { newId } from '../../db/ids.js';
import type { Executor } from '../../db/tx.js';

/**
 * The write side of the member directory (migrations/0013): the subscription mirror calls
 * `refresh` in the transaction that changes a subscription, so a member's directory rows
 * never disagree with their subscriptions after a commit. What the rows hold is defined
 * once, by the views creator_membership_source and community_membership_source.
 */
export function createMembershipRepo() {
  return {
    /**
     * Recomputes the member's rows for this creator and the community whose subscription
     * changed. Two transactions changing two subscriptions of one member at once must not
     * each write a summary that misses the other's change: the creator row is locked first
     * (created if new, which locks it too) and read afterwards, by a statement whose snapshot
     * is taken after the lock was granted, so the second sees the first's commit.
     */
    async refresh(creatorId: string, memberId: string, communityId: string, trx: Executor) {
      const created = await sql`insert into creator_members (creator_id, member_id, joined_at, last_joined_at, state, name_key, search, subscriptions, name, email, avatar_url)
        select creator_id, member_id, joined_at, last_joined_at, state, name_key, search, subscriptions, name, email, avatar_url from creator_membership_source
        where creator_id = ${creatorId} and member_id = ${memberId}
        on conflict (creator_id, member_id) do nothing
        returning member_id`.execute(trx);
      if (created.rows.length === 0) {
        await sql`select 1 from creator_members where creator_id = ${creatorId} and member_id = ${memberId} for update`.execute(trx);
        // Activity, too, holds still until this change commits (the metrics counters read it).
        await sql`select 1 from member_activity where creator_id = ${creatorId} and member_id = ${memberId} for update`.execute(trx);
        await sql`update creator_members c
          set joined_at = v.joined_at, last_joined_at = v.last_joined_at, state = v.state, name_key = v.name_key, search = v.search, subscriptions = v.subscriptions,
              name = v.name, email = v.email, avatar_url = v.avatar_url
          from creator_membership_source v
          where v.creator_id = ${creatorId} and v.member_id = ${memberId} and c.creator_id = v.creator_id and c.member_id = v.member_id
            and (c.joined_at, c.last_joined_at, c.state, c.name_key, c.search, c.subscriptions, c.name, c.email, c.avatar_url)
              is distinct from (v.joined_at, v.last_joined_at, v.state, v.name_key, v.search, v.subscriptions, v.name, v.email, v.avatar_url)`.execute(
          trx,
        );
      }
      await sql`insert into community_members as c (creator_id, community_id, member_id, joined_at, state, subscription_id, tier_id)
        select creator_id, community_id, member_id, joined_at, state, subscription_id, tier_id from community_membership_source
        where creator_id = ${creatorId} and member_id = ${memberId} and community_id = ${communityId}
        on conflict (creator_id, member_id, community_id) do update
          set joined_at = excluded.joined_at, state = excluded.state, subscription_id = excluded.subscription_id, tier_id = excluded.tier_id
          where (c.joined_at, c.state, c.subscription_id, c.tier_id) is distinct from (excluded.joined_at, excluded.state, excluded.subscription_id, excluded.tier_id)`.execute(
        trx,
      );
    },

    /**
     * Recomputes every member row of the creator in two set-based statements: for data
     * written around the mirror (the scale seeders insert subscriptions straight through SQL).
     * Not for use beside live traffic: it takes no per-member lock.
     */
    async rebuild(creatorId: string, trx: Executor) {
      await sql`insert into creator_members as c (creator_id, member_id, joined_at, last_joined_at, state, name_key, search, subscriptions, name, email, avatar_url)
        select creator_id, member_id, joined_at, last_joined_at, state, name_key, search, subscriptions, name, email, avatar_url from creator_membership_source where creator_id = ${creatorId}
        on conflict (creator_id, member_id) do update
          set joined_at = excluded.joined_at, last_joined_at = excluded.last_joined_at, state = excluded.state, name_key = excluded.name_key,
              search = excluded.search, subscriptions = excluded.subscriptions, name = excluded.name, email = excluded.email, avatar_url = excluded.avatar_url`.execute(trx);
      await sql`insert into community_members as c (creator_id, community_id, member_id, joined_at, state, subscription_id, tier_id)
        select creator_id, community_id, member_id, joined_at, state, subscription_id, tier_id from community_membership_source where creator_id = ${creatorId}
        on conflict (creator_id, member_id, community_id) do update
          set joined_at = excluded.joined_at, state = excluded.state, subscription_id = excluded.subscription_id, tier_id = excluded.tier_id`.execute(trx);
    },

    /** One line of a subscription's history: the state the mirror just wrote (its price and period: the metrics history's past MRR). */
    async recordChange(creatorId: string, subscriptionId: string, trx: Executor) {
      await sql`insert into subscription_changes (id, creator_id, subscription_id, status, cancel_at_period_end, tier_id, price_cents, billing_period, current_period_end)
        select ${newId()}, creator_id, id, status, cancel_at_period_end, tier_id, price_cents, billing_period, current_period_end
        from subscriptions where creator_id = ${creatorId} and id = ${subscriptionId}`.execute(trx);
    },
  };
}

export type MembershipRepo = ReturnType<typeof createMembershipRepo>;
