import { expect } from 'vitest';
import { createMember, json, mintMember, type TestApp, type TestCreator, type TestMember } from './helpers.js';
import { mirrorSubscription, type Place } from './members-kit.js';

/** Challenge fixtures: made and read through the creator and member APIs. */

export interface ChallengeInput {
  community_id: string;
  name?: string;
  metric?: 'workouts_count' | 'workouts_with_exercise' | 'volume_kg' | 'streak_days';
  exercise_id?: string | null;
  duration_days?: number;
  starts_at: Date | string;
  tier_min_id?: string | null;
  description?: string;
}

export const challengeBody = (input: ChallengeInput) => ({
  name: '30-day challenge',
  metric: 'workouts_count',
  duration_days: 30,
  ...input,
  starts_at: input.starts_at instanceof Date ? input.starts_at.toISOString() : input.starts_at,
});

export async function postChallenge(t: TestApp, creator: TestCreator, input: ChallengeInput) {
  return t.app.inject({ method: 'POST', url: '/api/v1/challenges', headers: creator.headers, payload: challengeBody(input) });
}

/** Creates a challenge; expects 201 and returns its record. */
export async function createChallenge(t: TestApp, creator: TestCreator, input: ChallengeInput) {
  const res = await postChallenge(t, creator, input);
  expect(res.statusCode, res.body).toBe(201);
  return json(res).data as Record<string, any> & { id: string };
}

/**
 * A member with a token and a live subscription (mirrored, no processor) to `place`. The token
 * is minted (mintMember) unless `signUp`: only a member that signed up has a password to log in with.
 */
export async function subscribedMember(
  t: TestApp,
  creator: TestCreator,
  place: Place,
  opts: { name?: string; status?: 'active' | 'trialing' | 'past_due' | 'canceled'; signUp?: boolean } = {},
): Promise<TestMember> {
  const name = opts.name ?? 'Maria Silva';
  const member = opts.signUp ? await createMember(t, { name }) : await mintMember(t, { name });
  await mirrorSubscription(t, creator, { ...place, memberId: member.id }, { status: opts.status ?? 'active' });
  return member;
}

export async function joinChallenge(t: TestApp, member: TestMember, challengeId: string) {
  return t.app.inject({ method: 'POST', url: `/api/v1/member/challenges/${challengeId}/join`, headers: member.headers });
}

/** Joins; expects 200 and returns the member's view of the challenge. */
export async function joined(t: TestApp, member: TestMember, challengeId: string) {
  const res = await joinChallenge(t, member, challengeId);
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as Record<string, any>;
}

/** The creator's leaderboard page; expects 200. */
export async function leaderboard(t: TestApp, creator: TestCreator, challengeId: string, query = '') {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/challenges/${challengeId}/leaderboard${query}`, headers: creator.headers });
  expect(res.statusCode, res.body).toBe(200);
  return json(res) as { data: { challenge_id: string; updated_at: string; rankings: Array<{ rank: number; member_id: string; name: string; score: number; delta: string }> }; pagination: Record<string, number> };
}

/** Scores by member id, from the creator's board (first page of 100). */
export async function scoresOf(t: TestApp, creator: TestCreator, challengeId: string) {
  const board = await leaderboard(t, creator, challengeId, '?limit=100');
  return new Map(board.data.rankings.map((r) => [r.member_id, r.score]));
}
