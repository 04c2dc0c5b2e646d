import { isoOrNull } from '../../db/tx.js';
import type { PostsTable } from '../../db/types.js';
import type { Selectable } from 'kysely';

/** A post as stored, with its counts (post_counts) beside it. */
export type PostRow = Selectable<PostsTable> & {
  kudos_count: number;
  comments_count: number;
  /** bigint as text (or a number from a json column). */
  views_count: string | number;
  poll_votes: number[] | null;
  poll_voters: number;
};

/** The poll's results as everyone with access sees them; null for a post without one. */
export function pollOf(p: PostRow, now: Date) {
  if (p.poll_question === null || p.poll_options === null) return null;
  return {
    question: p.poll_question,
    options: p.poll_options.map((text, index) => ({ index, text, votes: p.poll_votes?.[index] ?? 0 })),
    multiple_choice: p.poll_multiple ?? false,
    closes_at: isoOrNull(p.poll_closes_at),
    closed: p.poll_closes_at !== null && new Date(p.poll_closes_at) <= now,
    voters: p.poll_voters,
  };
}

export const countsOf = (p: PostRow) => ({ kudos_count: p.kudos_count, comments_count: p.comments_count, views_count: Number(p.views_count) });
