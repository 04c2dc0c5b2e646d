import { Type } from '@sinclair/typebox';
import { Timestamp, Uuid } from '../../../http/schemas.js';
import { defineEvent, EventData } from './define.js';

/** The community's life: posts, comments, challenges. Payloads never carry a paywalled body. */
export const postPublished = defineEvent(
  'post.published',
  "You published a post in one of your communities (posts are published when created). Carries the teaser members without access see, never the post's body: read it through the API.",
  EventData('PostPublishedData', {
    post_id: Uuid,
    community_id: Uuid,
    tier_min_id: Type.Union([Uuid, Type.Null()], { description: 'The lowest tier that reads it whole; null: every member.' }),
    preview: Type.Union([Type.String({ maxLength: 4000 }), Type.Null()], { description: 'The teaser (your own, or the automatic one); null when the post is too short to have one.' }),
    pinned: Type.Boolean(),
    has_poll: Type.Boolean(),
    media_count: Type.Integer({ format: 'int32', minimum: 0, maximum: 10 }),
    published_at: Timestamp,
  }),
);

export const commentCreated = defineEvent(
  'comment.created',
  'A member commented on one of your posts.',
  EventData('CommentCreatedData', {
    comment_id: Uuid,
    post_id: Uuid,
    community_id: Uuid,
    member_id: Uuid,
    body: Type.String({ maxLength: 8000, description: 'The comment as written (plain text, at most 2,000 characters).' }),
    created_at: Timestamp,
  }),
);

export const challengeJoined = defineEvent(
  'challenge.joined',
  'A member joined one of your challenges (once: joining again changes nothing and sends nothing).',
  EventData('ChallengeJoinedData', {
    challenge_id: Uuid,
    community_id: Uuid,
    member_id: Uuid,
    joined_at: Timestamp,
  }),
);

export const challengeFinished = defineEvent(
  'challenge.finished',
  "One of your challenges ended: its final ranking (the top 100; the leaderboard API has everyone), sent once, within minutes of its end (the standings job's interval). A log dated inside the challenge but written after this can still move the leaderboard.",
  EventData('ChallengeFinishedData', {
    challenge_id: Uuid,
    community_id: Uuid,
    name: Type.String({ maxLength: 200 }),
    metric: Type.Union(['workouts_count', 'workouts_with_exercise', 'volume_kg', 'streak_days'].map((m) => Type.Literal(m))),
    starts_at: Timestamp,
    ends_at: Timestamp,
    participants_count: Type.Integer({ format: 'int32', minimum: 0, maximum: 10_000_000 }),
    ranking: Type.Array(
      Type.Object(
        {
          rank: Type.Integer({ format: 'int32', minimum: 1, maximum: 10_000_000, description: 'By score, then by who reached it first.' }),
          member_id: Uuid,
          score: Type.Number({ description: "In the challenge's metric: workouts, kg or days." }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 100 },
    ),
  }),
);
