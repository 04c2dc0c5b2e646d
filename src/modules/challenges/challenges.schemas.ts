import { Type, type Static } from '@sinclair/typebox';
import { DateTimeInput, Int64, PaginationQuery, Timestamp, Uuid } from '../../http/schemas.js';
import { AbbreviatedName } from '../members/members.schemas.js';

export const METRICS = ['workouts_count', 'workouts_with_exercise', 'volume_kg', 'streak_days'] as const;
export const STATUSES = ['scheduled', 'running', 'finished', 'canceled'] as const;
export type ChallengeStatus = (typeof STATUSES)[number];

/** The range a challenge's length is accepted in, and the one recommended (outside it: a warning). */
export const DURATION = { min: 1, max: 365, recommendedMin: 21, recommendedMax: 90 };

const Metric = Type.Union(
  METRICS.map((m) => Type.Literal(m)),
  {
    description:
      'What scores: `workouts_count` = logs in the window; `workouts_with_exercise` = logs with at least one set (warm-ups included) of `exercise_id`; `volume_kg` = Σ reps × load_kg over working sets (warm-ups excluded); `streak_days` = the longest run of consecutive UTC days with at least one log. Every log of the member counts, wherever it was logged (a personal log too).',
  },
);
const Status = Type.Union(
  STATUSES.map((s) => Type.Literal(s)),
  { description: '`scheduled` before `starts_at`, `running` until `ends_at`, then `finished`; `canceled` once canceled (no joins, scores frozen).' },
);
/** A challenge's name: also the bound of every answer that names one (member records, metrics). */
export const CHALLENGE_NAME_MAX = 200;
const DESCRIPTION_MAX = 5000;
const Name = Type.String({ minLength: 1, maxLength: CHALLENGE_NAME_MAX, pattern: '\\S', description: '1 to 200 characters, not blank.' });
const Description = Type.String({ maxLength: DESCRIPTION_MAX, description: 'The rules in text, up to 5,000 characters.' });
const DurationDays = Type.Integer({
  format: 'int32',
  minimum: DURATION.min,
  maximum: DURATION.max,
  description: `Length in days, ${DURATION.min} to ${DURATION.max}; ${DURATION.recommendedMin} to ${DURATION.recommendedMax} is recommended and outside it the answer carries a \`warnings\` entry.`,
});
const StartsAt = DateTimeInput('Start of the window (inclusive); the window ends `duration_days` × 24 h later (exclusive), by 9999-12-31.');
const ExerciseId = Type.Union([Uuid, Type.Null()], {
  description: 'Required with `workouts_with_exercise` and only allowed with it: a catalog exercise or one of yours.',
});
const TierMin = Type.Union([Uuid, Type.Null()], {
  description: 'Minimum tier to take part, an active tier of the same community, compared in the tier order (by `level` when the community uses levels, else monthly-normalised price); null = every tier.',
});

export const CreateChallengeBody = Type.Object(
  {
    community_id: Type.String({ format: 'uuid', maxLength: 36, description: 'One of your communities, not paused.' }),
    name: Name,
    description: Type.Optional(Description),
    metric: Metric,
    exercise_id: Type.Optional(ExerciseId),
    duration_days: DurationDays,
    starts_at: StartsAt,
    tier_min_id: Type.Optional(TierMin),
  },
  { additionalProperties: false },
);
export type CreateChallengeBody = Static<typeof CreateChallengeBody>;

export const UpdateChallengeBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    metric: Type.Optional(Metric),
    exercise_id: Type.Optional(ExerciseId),
    duration_days: Type.Optional(DurationDays),
    starts_at: Type.Optional(DateTimeInput('A new start, not in the past.')),
    tier_min_id: Type.Optional(TierMin),
  },
  { additionalProperties: false, description: 'The fields to change; an empty body changes nothing and answers the challenge.' },
);
export type UpdateChallengeBody = Static<typeof UpdateChallengeBody>;

export const ListChallengesQuery = Type.Object(
  {
    ...PaginationQuery,
    community_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Only this community (404 if it is not yours).' })),
    status: Type.Optional(Status),
  },
  { additionalProperties: false },
);
export type ListChallengesQuery = Static<typeof ListChallengesQuery>;

export const LeaderboardQuery = Type.Object(
  {
    page: PaginationQuery.page,
    limit: Type.Integer({ format: 'int32', minimum: 1, maximum: 100, default: 50, description: 'Rankings per page, 1 to 100 (default 50).' }),
  },
  { additionalProperties: false },
);
export type LeaderboardQuery = Static<typeof LeaderboardQuery>;

const Warning = Type.Object(
  {
    field: Type.String({ maxLength: 64, pattern: '^[a-z_]+$', description: 'The field of the request it is about.' }),
    message: Type.String({ maxLength: 300 }),
  },
  { description: 'Accepted, but worth a second look.' },
);

const challengeFields = {
  id: Uuid,
  community_id: Uuid,
  name: Type.String({ maxLength: CHALLENGE_NAME_MAX }),
  description: Type.String({ maxLength: DESCRIPTION_MAX }),
  metric: Metric,
  exercise_id: Type.Union([Uuid, Type.Null()]),
  duration_days: Int64(),
  starts_at: Timestamp,
  ends_at: Type.String({ format: 'date-time', maxLength: 64, description: '`starts_at` + `duration_days` days: the first moment outside the window.' }),
  tier_min_id: Type.Union([Uuid, Type.Null()]),
  status: Status,
  participants_count: Int64({ description: 'Members taking part now.' }),
};

export const Challenge = Type.Object(
  {
    ...challengeFields,
    canceled_at: Type.Union([Timestamp, Type.Null()]),
    // warningsOf (challenges.service.ts) has a single rule, the duration's.
    warnings: Type.Array(Warning, { maxItems: 1, description: 'Accepted settings outside the recommendations (a duration outside 21–90 days); empty when none.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Challenge', title: 'Challenge' },
);

export const MemberChallenge = Type.Object(
  {
    ...challengeFields,
    joined: Type.Boolean({ description: 'Whether you take part.' }),
    can_join: Type.Boolean({ description: 'Whether joining would succeed now: scheduled or running, its community not paused, and your tier qualifies.' }),
    score: Type.Union([Type.Number(), Type.Null()], { description: 'Your score; null when you do not take part.' }),
    rank: Type.Union([Int64(), Type.Null()], { description: 'Your rank (1 = first); null when you do not take part.' }),
  },
  { $id: 'MemberChallenge', title: 'MemberChallenge' },
);

export const Ranking = Type.Object(
  {
    rank: Int64({ minimum: 1, description: 'Position, 1 = first: score descending, ties to the member who reached the score first.' }),
    member_id: Uuid,
    name: AbbreviatedName,
    score: Type.Number(),
    delta: Type.String({
      pattern: '^[+-][0-9]+$',
      maxLength: 17, // a sign and a safe integer's 16 digits
      description: 'Places gained (`+N`) or lost (`-N`) since the end of the last ranked UTC day; `+0` when unchanged or new since then.',
    }),
  },
  { $id: 'Ranking', title: 'Ranking' },
);

const boardFields = {
  challenge_id: Uuid,
  updated_at: Type.String({ format: 'date-time', maxLength: 64, description: 'When these rankings were read; scores move as logs are written, so the board is current as of this moment.' }),
  rankings: Type.Array(Type.Ref(Ranking), { maxItems: 100, description: 'One page of them (`limit`, at most 100).' }),
};

export const Leaderboard = Type.Object(boardFields, { $id: 'Leaderboard', title: 'Leaderboard' });
export const MemberLeaderboard = Type.Object(
  { ...boardFields, me: Type.Union([Type.Ref(Ranking), Type.Null()], { description: 'Your own row, wherever it falls; null when you do not take part.' }) },
  { $id: 'MemberLeaderboard', title: 'MemberLeaderboard' },
);

export const MemberChallengesQuery = Type.Object(
  { ...PaginationQuery, community_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Only this community.' })) },
  { additionalProperties: false },
);
export type MemberChallengesQuery = Static<typeof MemberChallengesQuery>;

export const Participation = Type.Object({
  challenge_id: Uuid,
  name: Type.String({ maxLength: CHALLENGE_NAME_MAX }),
  status: Status,
  score: Type.Number(),
  rank: Int64({ minimum: 1 }),
  joined_at: Timestamp,
});
