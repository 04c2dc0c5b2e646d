import { Participation } from '../challenges/challenges.schemas.js';
import { Type, type Static } from '@sinclair/typebox';
import { Currency, Int64, PaginationQuery, Timestamp, Uuid } from '../../http/schemas.js';
import { COMMUNITY_NAME_MAX } from '../communities/communities.schemas.js';
import { EXERCISE_TEXT_MAX } from '../exercises/exercises.schemas.js';
import { AVATAR_URL_MAX, EMAIL_MAX, MEMBER_NAME_MAX } from '../members/members.schemas.js';
import { PROGRAM_NAME_MAX } from '../programs/programs.schemas.js';
import { STATUS_MEANINGS, SUBSCRIPTION_STATUSES } from '../subscriptions/status.js';
import { RefundStatus, Subscription } from '../subscriptions/subscriptions.schemas.js';
import { TIER_NAME_MAX } from '../tiers/tiers.schemas.js';

const SubscriptionStatus = Type.Union(SUBSCRIPTION_STATUSES.map((s) => Type.Literal(s)), { description: STATUS_MEANINGS });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const MemberStatusValues = ['active', 'trial', 'at_risk', 'churned'] as const;
export const SortValues = ['joined_at', '-joined_at', 'last_active_at', '-last_active_at', 'name', '-name'] as const;

const MemberStatus = Type.Union(
  MemberStatusValues.map((v) => Type.Literal(v)),
  {
    description:
      "DESIGN §7, the first rule that holds: `churned` = no live subscription (every one canceled, or in a status that gives no access: `incomplete`, `incomplete_expired`, `unpaid`, `paused` — a member who stopped paying is churned unless another subscription is live); `trial` = a trialing one and no active one; `at_risk` = a past_due one, or an active one set to cancel at period end, or no activity for 14 days (counted from the last activity, or from the latest subscription's start when that is later, so a member who just joined is not at risk); `active` = the rest. Evaluated over the creator's communities, or within the community of `community_id` / `tier_id` when given; activity always counts across the creator's communities.",
  },
);

export const MemberSubscriptionEntry = Type.Object({
  community_id: Uuid,
  tier_id: Uuid,
  tier_name: Type.String({ maxLength: TIER_NAME_MAX }),
  status: SubscriptionStatus,
  joined_at: Type.String({ format: 'date-time', maxLength: 64, description: 'When the member first subscribed in this community (processor time).' }),
});

export const Engagement = Type.Object({
  last_active_at: Type.Union([Timestamp, Type.Null()], {
    description:
      "The member's last activity in this creator's communities (a workout logged, a comment, kudos, a poll vote or a post view), exact to within an hour: activity is recorded at most once an hour. Null when there has been none.",
  }),
  workouts_completed_30d: Int64({ description: "Workouts logged in this creator's communities, performed in the last 30 days." }),
  posts_count_30d: Int64({
    description: "Comments the member wrote on posts in this creator's communities in the last 30 days (members comment; posts are the creator's). Comments on a deleted post, or deleted comments, do not count.",
  }),
  streak_days: Int64({ description: "Consecutive UTC days with at least one workout logged in this creator's communities, ending today or yesterday; 0 otherwise." }),
});

const memberFields = {
  id: Uuid,
  name: Type.String({ maxLength: MEMBER_NAME_MAX }),
  email: Type.String({ format: 'email', maxLength: EMAIL_MAX }),
  avatar_url: Type.Union([Type.String({ maxLength: AVATAR_URL_MAX }), Type.Null()]),
  subscriptions: Type.Array(MemberSubscriptionEntry, {
    description:
      "One entry per community of this creator the member ever subscribed to, oldest first: the subscription that counts there now (a live one, the most recent if several; else the most recent ended one). The detail's `subscription_history` has every subscription.",
  }),
  engagement: Engagement,
};

export const MemberListItem = Type.Object(memberFields, { $id: 'MemberListItem', title: 'MemberListItem', description: 'A member as the creator sees them: only subscriptions and activity in this creator’s communities.' });

export const MembersPagination = Type.Object({
  page: Int64(),
  limit: Int64(),
  total: Int64({
    description:
      'Members matching the filters. Always exact for a list of everyone, of a community or of a tier (kept as members join). With a status, join-date or search filter: exact up to 10,000; above that it is the database planner’s estimate (fast at any size, typically within a few percent for a single-filter list; the same filter is estimated again at most once a minute) and `total_is_estimate` is true.',
  }),
  pages: Int64({ description: 'Number of pages for `total` (0 when there are no members).' }),
  total_is_estimate: Type.Boolean({ description: 'True when `total` (and so `pages`) is an estimate; see `total`.' }),
});

const filters = {
  community_id: Type.Optional(
    Type.String({ format: 'uuid', maxLength: 36, description: "Members who ever subscribed in this community (a community that is not this creator's matches no one)." }),
  ),
  tier_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Members whose current subscription in the tier’s community (the one listed in `subscriptions`) is in this tier.' })),
  status: Type.Optional(MemberStatus),
  joined_after: Type.Optional(
    Type.String({
      maxLength: 64,
      pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2}))?$',
      description:
        'ISO date (`2026-03-01`, read as that day’s 00:00 UTC) or date-time with offset: members who first joined (in the community of `community_id`/`tier_id` when given, else any of the creator’s communities) strictly after it.',
    }),
  ),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Substring of the name or e-mail, ignoring case and accents ("joao" finds "João", "SILVA" finds "Maria Silva"); `%`, `_` and `\\` match themselves.',
    }),
  ),
  sort: Type.Optional(
    Type.Union(
      SortValues.map((v) => Type.Literal(v)),
      {
        default: '-joined_at',
        description:
          '`joined_at` (first subscription to the creator, or to the filtered community), `last_active_at` or `name` (ignoring case and accents); `-` for descending. Default `-joined_at`. Ties by member id in the same direction. Members never active come last in `-last_active_at`, first in `last_active_at`.',
      },
    ),
  ),
};

export const ListMembersQuery = Type.Object({ ...PaginationQuery, ...filters }, { additionalProperties: false });
export type ListMembersQuery = Static<typeof ListMembersQuery>;

export const ExportMembersQuery = Type.Object(filters, { additionalProperties: false });
export type ExportMembersQuery = Static<typeof ExportMembersQuery>;

const Money = Int64({ description: 'Integer cents.' });

// A subscription record (GET /subscriptions/{id}) with what the member record adds to it.
const HistoryEntry = Type.Object({
  ...Subscription.properties,
  community_name: Type.String({ maxLength: COMMUNITY_NAME_MAX }),
  tier_name: Type.String({ maxLength: TIER_NAME_MAX }),
  changes: Type.Array(
    Type.Object({
      recorded_at: Type.String({ format: 'date-time', maxLength: 64, description: 'When the service mirrored this state.' }),
      status: SubscriptionStatus,
      cancel_at_period_end: Type.Boolean(),
      tier_id: Uuid,
      price_cents: Money,
      current_period_end: NullableTimestamp,
    }),
    {
      description:
        'Every state the mirror recorded, oldest first: creation, status changes, cancel at period end set or lifted, tier or price changes, renewals (a new period end). Recorded since member records exist; older subscriptions show their later changes only (their processor times above still tell creation, cancellation and end).',
    },
  ),
  payments: Type.Array(Type.Object({ id: Uuid, amount_cents: Money, currency: Currency, paid_at: Timestamp }), { description: 'Paid invoices, oldest first.' }),
  refunds: Type.Array(Type.Object({ id: Uuid, amount_cents: Money, currency: Currency, status: RefundStatus, created_at: Timestamp }), { description: 'Refunds, oldest first.' }),
});

export const ExecutedWorkout = Type.Object(
  {
    id: Uuid,
    community_id: Type.Union([Uuid, Type.Null()]),
    workout_id: Type.Union([Uuid, Type.Null()]),
    workout_name: Type.Union([Type.String({ maxLength: PROGRAM_NAME_MAX }), Type.Null()], { description: 'The program workout followed, if any.' }),
    performed_at: Timestamp,
    sets_count: Int64(),
    created_at: Timestamp,
  },
  { $id: 'ExecutedWorkout', title: 'ExecutedWorkout', description: "A workout the member logged in one of this creator's communities (personal logs and other creators' never show)." },
);

export const MemberRecord = Type.Object(
  {
    ...memberFields,
    status: MemberStatus,
    joined_at: Type.String({ format: 'date-time', maxLength: 64, description: "First subscription to any of this creator's communities." }),
    subscription_history: Type.Array(HistoryEntry, { description: "Every subscription the member holds or held in this creator's communities, oldest first." }),
    workouts: Type.Object({
      // 20: RECENT_WORKOUTS (record.service.ts).
      data: Type.Array(Type.Ref(ExecutedWorkout), { maxItems: 20, description: 'The 20 most recent, newest first (performed_at, ties by id).' }),
      total: Int64(),
      next: Type.Union([Type.String({ format: 'uri-reference', maxLength: 100 }), Type.Null()], { description: 'Path of the next page (`GET /api/v1/members/:id/workout-logs?page=2&limit=20`), null when these are all.' }),
    }),
    personal_records: Type.Array(
      Type.Object({
        exercise_id: Uuid,
        exercise_name: Type.String({ maxLength: EXERCISE_TEXT_MAX }),
        kind: Type.Union([Type.Literal('max_load'), Type.Literal('est_1rm'), Type.Literal('max_volume'), Type.Literal('max_reps')]),
        value: Type.Number(),
        previous_value: Type.Number({ description: 'The record it beat.' }),
        log_id: Uuid,
        performed_at: Timestamp,
      }),
      {
        description:
          "The member's current best per exercise and kind where it was set in this creator's communities and beat an earlier set (a first set is a baseline, not a PR). Newest first. A best set in a personal log or another creator's community is not shown.",
      },
    ),
    challenges: Type.Array(Participation, {
      description: "The challenges the member takes part in within your communities, latest start first, with their score and current rank (1 = first).",
    }),
  },
  { $id: 'MemberRecord', title: 'MemberRecord' },
);
