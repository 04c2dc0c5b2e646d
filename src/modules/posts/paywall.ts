import { iso } from '../../db/tx.js';
import { AppError } from '../../http/errors.js';
import { cheapestMeeting, meetsMinimum, rankTiers, type RankableTier } from '../tiers/tier-order.js';
import { previewOf } from './content.js';
import { pollOf, type PostRow } from './present.js';

/**
 * The paywall (DESIGN §5, §7): the one place that decides whether a member reads a post in
 * full, and the one place that builds what a member is shown of a post. Every member-facing
 * path that returns a post or part of one (feed, get, comments, kudos, poll votes) goes
 * through `verdictOf` — directly or via `presentToMember` / `requireFull` — so no route can
 * forget the rule. A locked post is built field by field from an allow-list, never by
 * copying the post and deleting what must not leak, and what it says of the post is
 * `teaserOf`: only what the creator made public.
 */

export interface AccessTier extends RankableTier {
  name: string;
  is_active: boolean;
}

/** What the paywall knows about a member in one community: its tiers and the member's live ones. */
export interface CommunityAccess {
  tiers: AccessTier[];
  ranks: Map<string, number>;
  /** Tiers of the member's live subscriptions there (trialing, active — cancel at period end included until it ends — or past_due). */
  liveTierIds: string[];
}

export function accessOf(tiers: AccessTier[], liveTierIds: string[]): CommunityAccess {
  return { tiers, ranks: rankTiers(tiers), liveTierIds };
}

export type Verdict = { full: true } | { full: false; needed: AccessTier | undefined; upgrade: AccessTier | undefined };

/** Full when the post is public or one of the member's live tiers equals or exceeds its minimum in the tier order. */
export function verdictOf(post: Pick<PostRow, 'tier_min_id'>, access: CommunityAccess): Verdict {
  const minimum = post.tier_min_id;
  if (minimum === null || access.liveTierIds.some((held) => meetsMinimum(access.ranks, held, minimum))) return { full: true };
  return { full: false, needed: access.tiers.find((t) => t.id === minimum), upgrade: cheapestMeeting(access.tiers, access.ranks, minimum) };
}

/** 403 unless the member reads the post in full: engagement (comments, kudos, votes) needs what reading needs. */
export function requireFull(post: Pick<PostRow, 'tier_min_id'>, access: CommunityAccess): void {
  const v = verdictOf(post, access);
  if (v.full) return;
  const offer = v.upgrade ? ` Subscribe to "${v.upgrade.name}" (or a higher tier) to unlock it.` : '';
  throw new AppError('forbidden', `This post is for members of the "${v.needed?.name ?? 'required'}" tier or higher.${offer}`);
}

/**
 * What a member without access reads of a post: the creator's own preview as written, else
 * the automatic one (content.ts previewOf: at most a third of the text and 140 characters,
 * none under 60), else nothing. The automatic preview is stored when the post is written;
 * posts stored under the earlier rule (up to 140 characters of any post, so a short post
 * whole) had it cleared and flagged stale by migrations/0019, and until the start-up
 * backfill (posts.service refreshStalePreviews) recomputes them it is computed here from the
 * content (~0.4 ms for 4,000 characters), so no path ever serves the old one.
 */
export function teaserOf(p: Pick<PostRow, 'content' | 'preview' | 'preview_auto' | 'preview_auto_stale'>): string | null {
  if (p.preview !== null) return p.preview;
  return p.preview_auto_stale ? previewOf(p.content) : p.preview_auto;
}

/** What only a member who reads the post sees of themselves: their kudos and poll choices. */
export interface OwnEngagement {
  kudoed: boolean;
  my_votes: number[];
}

/** What every member sees of a post, locked or not. */
const headOf = (p: PostRow) => ({
  id: p.id,
  community_id: p.community_id,
  pinned: p.pinned,
  kudos_count: p.kudos_count,
  comments_count: p.comments_count,
  views_count: Number(p.views_count),
  created_at: iso(p.created_at),
  updated_at: iso(p.updated_at),
});

export function presentToMember(p: PostRow, access: CommunityAccess, own: OwnEngagement, now: Date) {
  const v = verdictOf(p, access);
  // The head's object extended in place (Object.assign), not spread into a new one: a feed page
  // presents 50 posts, and objects built by spreading cost several times as much to build and to
  // serialize (~4x in a micro-benchmark; 7.7 % of the server's CPU on a feed page, 0.5 % after).
  if (v.full) {
    const poll = pollOf(p, now);
    return Object.assign(headOf(p), {
      locked: false as const,
      content: p.content,
      content_html: p.content_html,
      tier_min_id: p.tier_min_id,
      media: p.media,
      poll: poll && { ...poll, my_votes: own.my_votes },
      kudoed: own.kudoed,
    });
  }
  return Object.assign(headOf(p), {
    locked: true as const,
    preview: teaserOf(p),
    tier_min_id: p.tier_min_id!,
    upgrade_tier_id: v.upgrade?.id ?? null,
    upgrade_tier_name: v.upgrade?.name ?? null,
    upgrade_price_cents: v.upgrade?.price_cents ?? null,
    upgrade_billing_period: v.upgrade?.billing_period ?? null,
    media_count: p.media.length,
    has_poll: p.poll_question !== null,
  });
}

export type MemberPostView = ReturnType<typeof presentToMember>;
