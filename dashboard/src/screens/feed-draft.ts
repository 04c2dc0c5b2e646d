import type { paths } from '../api/openapi.js';
import type { Post } from './feed-lookup.js';

type CreateBody = paths['/api/v1/posts']['post']['requestBody']['content']['application/json'];
type EditBody = NonNullable<paths['/api/v1/posts/{id}']['patch']['requestBody']>['content']['application/json'];
export type MediaType = 'image' | 'video' | 'audio';

/** The composer's fields as typed: strings for what the inputs hold, '' for "none". */
export interface Draft {
  community_id: string;
  /** '' = everyone in the community. */
  tier: string;
  content: string;
  /** '' = the automatic preview. */
  preview: string;
  media: Array<{ type: MediaType; url: string }>;
  pinned: boolean;
  poll: PollDraft | null;
}

export interface PollDraft {
  question: string;
  options: string[];
  multiple_choice: boolean;
  /** A datetime-local value (the browser's time zone), '' = open while the post exists. */
  closes_at: string;
}

/** ISO instant → the datetime-local value showing it in the browser's time zone. */
function localInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

export function draftOf(post: Post | undefined, communityId: string): Draft {
  if (!post) return { community_id: communityId, tier: '', content: '', preview: '', media: [], pinned: false, poll: null };
  const poll = post.poll;
  return {
    community_id: post.community_id,
    tier: post.tier_min_id ?? '',
    content: post.content,
    preview: post.preview_is_custom ? (post.preview ?? '') : '',
    media: post.media.map((m) => ({ type: m.type, url: m.url })),
    pinned: post.pinned,
    poll: poll
      ? { question: poll.question, options: poll.options.map((o) => o.text), multiple_choice: poll.multiple_choice, closes_at: localInput(poll.closes_at) }
      : null,
  };
}

export const newPoll = (): PollDraft => ({ question: '', options: ['', ''], multiple_choice: false, closes_at: '' });

/** Whether members have voted: the poll's options and choice mode are then fixed (409 otherwise). */
export const pollFixed = (post: Post | undefined) => (post?.poll?.voters ?? 0) > 0;

/** A datetime-local value (read in the browser's time zone) as an RFC 3339 instant. */
const instant = (local: string) => new Date(local).toISOString();

export function createBody(d: Draft): CreateBody {
  return {
    community_id: d.community_id,
    content: d.content,
    tier_min_id: d.tier || null,
    preview: d.preview.trim() ? d.preview : null,
    media: d.media,
    pinned: d.pinned,
    poll: d.poll
      ? {
          question: d.poll.question,
          options: d.poll.options,
          multiple_choice: d.poll.multiple_choice,
          closes_at: d.poll.closes_at ? instant(d.poll.closes_at) : null,
        }
      : null,
  };
}

/**
 * The edit: every field the composer shows, but the poll only when it changed (a closed
 * poll's past closing time sent back would be refused as not in the future), and once
 * anyone voted without the choice mode, which is then fixed.
 */
export function editBody(d: Draft, post: Post): EditBody {
  const body: EditBody = {
    content: d.content,
    tier_min_id: d.tier || null,
    preview: d.preview.trim() ? d.preview : null,
    media: d.media,
    pinned: d.pinned,
  };
  const before = draftOf(post, post.community_id).poll;
  if (!d.poll) {
    if (before) body.poll = null;
    return body;
  }
  if (JSON.stringify(d.poll) === JSON.stringify(before)) return body;
  body.poll = { question: d.poll.question, options: d.poll.options };
  if (!pollFixed(post)) body.poll.multiple_choice = d.poll.multiple_choice;
  if (d.poll.closes_at !== before?.closes_at) body.poll.closes_at = d.poll.closes_at ? instant(d.poll.closes_at) : null;
  return body;
}

/** The API's field paths (`media.0.url`) in the composer's words. */
export function fieldName(path: string): string {
  const [head, index, leaf] = path.replace(/^body\.?/, '').split('.');
  const n = Number(index) + 1;
  switch (head) {
    case 'community_id':
      return 'Community';
    case 'content':
      return 'Text';
    case 'tier_min_id':
      return 'Who can read it';
    case 'preview':
      return 'Preview';
    case 'pinned':
      return 'Pin';
    case 'media':
      return index === undefined ? 'Attachments' : `Attachment ${n}${leaf === 'type' ? ' type' : ' address'}`;
    case 'poll':
      if (index === 'question') return 'Poll question';
      if (index === 'closes_at') return 'Voting closes';
      if (index === 'options') return leaf === undefined ? 'Poll options' : `Option ${Number(leaf) + 1}`;
      return 'Poll';
    default:
      return path;
  }
}
