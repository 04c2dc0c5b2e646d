import { Type, type Static } from '@sinclair/typebox';
import { DateTimeInput, Int64, PaginationQuery, Timestamp, Uuid } from '../../http/schemas.js';
import { AbbreviatedName, MEMBER_NAME_MAX } from '../members/members.schemas.js';
import { TIER_NAME_MAX } from '../tiers/tiers.schemas.js';
import { AUTO_PREVIEW_MAX, AUTO_PREVIEW_MIN_TEXT, COMMENT_MAX, CONTENT_HTML_MAX, MEDIA_MAX, MEDIA_TYPES, MEDIA_URL_MAX, POST_CONTENT_MAX } from './content.js';

/** Lengths beyond which a text is refused before it is even counted (the real limits are counted in code points after NFC). */
const RAW_BOUND = 4;
export const POLL = { optionsMin: 2, optionsMax: 10, questionMax: 300, optionMax: 100 };
export const PREVIEW_MAX = 280;

/** The automatic preview's rule (content.ts previewOf), as the API documents it. */
export const AUTO_PREVIEW_RULE = `the plain text of the content (markdown stripped), cut at a word to at most its first third and at most ${AUTO_PREVIEW_MAX} characters, ending with "…"; none (null) when that text is under ${AUTO_PREVIEW_MIN_TEXT} characters, so a short post is never given away. Automatic previews stored before this rule were recomputed (migration 0019), and until a post's is, it is computed when read.`;

const Content = Type.String({
  minLength: 1,
  maxLength: POST_CONTENT_MAX * RAW_BOUND,
  description: `Light markdown, 1 to ${POST_CONTENT_MAX} characters counted as a person counts them: Unicode code points after NFC normalisation (an emoji or an accented letter is one; a flag or a family emoji is several). Stored and returned as written; \`content_html\` is its rendering, which may weigh at most ${CONTENT_HTML_MAX} bytes (64 KB): a post of many links can pass it, as each link writes its address out in full (400 says so, with the size). Not blank.`,
});
const Preview = Type.Union([Type.String({ minLength: 1, maxLength: PREVIEW_MAX * RAW_BOUND, description: `Plain text, 1 to ${PREVIEW_MAX} characters.` }), Type.Null()], {
  description: `What members without access read instead of the post, shown as written: the only part of a tiered post you make public. Null (the default) uses the automatic preview: ${AUTO_PREVIEW_RULE}`,
});
const TierMin = Type.Union([Uuid, Type.Null()], {
  description: 'Minimum tier to read the post, a tier of the same community (active or not), compared in the tier order (by `level` when the community uses levels, else monthly-normalised price); null = public: every member, subscribed or not.',
});
const MediaItem = Type.Object(
  {
    type: Type.Union(MEDIA_TYPES.map((t) => Type.Literal(t))),
    url: Type.String({
      minLength: 1,
      maxLength: MEDIA_URL_MAX,
      description: 'An `https` URL, without a user name or password, to a public host (not localhost, a private, loopback or link-local address, or a single-label name). The service never fetches it; the app does.',
    }),
  },
  { additionalProperties: false },
);
const Media = Type.Array(MediaItem, { maxItems: MEDIA_MAX, description: `Up to ${MEDIA_MAX} attachments, in display order.` });
/** Media as stored: each URL as the URL parser wrote it out (https, at most MEDIA_URL_MAX once percent-encoded: media-url.ts). */
const StoredMedia = Type.Array(
  Type.Object({ type: MediaItem.properties.type, url: Type.String({ maxLength: MEDIA_URL_MAX, pattern: '^https://', description: 'An `https` URL to a public host.' }) }),
  { maxItems: MEDIA_MAX, description: 'The attachments, in display order.' },
);

/**
 * Texts come back as written (or NFC-normalised, which the counted limits bound), so an answer's
 * bound is the request's: at most RAW_BOUND code points per counted character.
 */
const Text = (max: number, description?: string) => Type.String({ maxLength: max * RAW_BOUND, ...(description ? { description } : {}) });
const Pinned = Type.Boolean({ description: 'Pinned posts come first in every feed (newest pinned first).' });

const PollInput = Type.Object(
  {
    question: Type.String({ minLength: 1, maxLength: POLL.questionMax * RAW_BOUND, description: `1 to ${POLL.questionMax} characters.` }),
    options: Type.Array(Type.String({ minLength: 1, maxLength: POLL.optionMax * RAW_BOUND }), {
      minItems: POLL.optionsMin,
      maxItems: POLL.optionsMax,
      description: `${POLL.optionsMin} to ${POLL.optionsMax} distinct options, each 1 to ${POLL.optionMax} characters; members vote by an option's \`index\` (0-based). Fixed once anyone has voted (409).`,
    }),
    multiple_choice: Type.Optional(
      Type.Boolean({ description: 'Whether a member may choose several options: false (one) when omitted on create; an edit that omits it keeps the poll’s. Fixed once anyone has voted.' }),
    ),
    closes_at: Type.Optional(
      Type.Union([DateTimeInput('When voting ends.'), Type.Null()], {
        description: 'When voting ends (must be in the future); null = open while the post exists, as when omitted on create; an edit that omits it keeps the poll’s.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CreatePostBody = Type.Object(
  {
    community_id: Type.String({ format: 'uuid', maxLength: 36, description: 'One of your communities (404 otherwise); a paused one takes posts too, for the members it still has.' }),
    content: Content,
    preview: Type.Optional(Preview),
    tier_min_id: Type.Optional(TierMin),
    media: Type.Optional(Media),
    pinned: Type.Optional(Pinned),
    poll: Type.Optional(Type.Union([PollInput, Type.Null()], { description: 'An optional poll under the post.' })),
  },
  { additionalProperties: false },
);
export type CreatePostBody = Static<typeof CreatePostBody>;

export const UpdatePostBody = Type.Object(
  {
    content: Type.Optional(Content),
    preview: Type.Optional(Preview),
    tier_min_id: Type.Optional(TierMin),
    media: Type.Optional(Media),
    pinned: Type.Optional(Pinned),
    poll: Type.Optional(
      Type.Union([PollInput, Type.Null()], {
        description: 'A new poll, or null to remove it. Once anyone has voted, only `question` and `closes_at` may change: other options, another choice mode or removing the poll is 409.',
      }),
    ),
  },
  { additionalProperties: false, description: 'The fields to change, validated as on create; an empty body changes nothing.' },
);
export type UpdatePostBody = Static<typeof UpdatePostBody>;
export type PollInput = Static<typeof PollInput>;

export const ListPostsQuery = Type.Object(
  {
    ...PaginationQuery,
    community_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Only this community (404 if it is not yours).' })),
    pinned: Type.Optional(Type.Boolean({ description: 'Only pinned (true) or only unpinned (false) posts.' })),
    tier_min_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Only posts with exactly this minimum tier.' })),
  },
  { additionalProperties: false },
);
export type ListPostsQuery = Static<typeof ListPostsQuery>;

export const FeedQuery = Type.Object(
  {
    ...PaginationQuery,
    community_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'One community: one of yours, or any public one (404 otherwise). Omitted: every community you hold or held a subscription in.' })),
  },
  { additionalProperties: false },
);
export type FeedQuery = Static<typeof FeedQuery>;

export const CommentsQuery = Type.Object(PaginationQuery, { additionalProperties: false });
export const CommentBody = Type.Object(
  { body: Type.String({ minLength: 1, maxLength: COMMENT_MAX * RAW_BOUND, description: `Plain text, 1 to ${COMMENT_MAX} characters (code points after NFC), not blank; returned as written.` }) },
  { additionalProperties: false },
);
export const VoteBody = Type.Object(
  {
    options: Type.Array(Type.Integer({ format: 'int32', minimum: 0, maximum: POLL.optionsMax - 1 }), {
      minItems: 1,
      maxItems: POLL.optionsMax,
      uniqueItems: true,
      description: "The indexes of your choices: exactly one unless the poll is multiple choice. Voting again replaces your earlier choices.",
    }),
  },
  { additionalProperties: false },
);
export const PostCommentParams = Type.Object({ id: Uuid, comment_id: Uuid }, { additionalProperties: false });

const PollOption = Type.Object({ index: Int64({ minimum: 0 }), text: Text(POLL.optionMax), votes: Int64({ minimum: 0, description: 'Members who chose it.' }) });
const pollFields = {
  question: Text(POLL.questionMax),
  options: Type.Array(PollOption, { maxItems: POLL.optionsMax }),
  multiple_choice: Type.Boolean(),
  closes_at: Type.Union([Timestamp, Type.Null()]),
  closed: Type.Boolean({ description: 'Past `closes_at`: no more votes.' }),
  voters: Int64({ minimum: 0, description: 'Members who voted (with several choices, each counts once here).' }),
};
const Poll = Type.Object(pollFields, { $id: 'Poll', title: 'Poll' });
const MemberPoll = Type.Object(
  { ...pollFields, my_votes: Type.Array(Int64({ minimum: 0 }), { maxItems: POLL.optionsMax, uniqueItems: true, description: 'The indexes you chose; empty if you have not voted.' }) },
  { $id: 'MemberPoll', title: 'MemberPoll' },
);
export { MemberPoll, Poll };

const counts = {
  kudos_count: Int64({ minimum: 0 }),
  comments_count: Int64({ minimum: 0 }),
  views_count: Int64({ minimum: 0, description: 'Distinct members who opened the post, counted once per member per UTC day.' }),
};

export const Post = Type.Object(
  {
    id: Uuid,
    community_id: Uuid,
    content: Text(POST_CONTENT_MAX, 'The markdown as written.'),
    // Bounded in bytes when written (content.ts CONTENT_HTML_MAX); characters never outnumber bytes.
    content_html: Type.String({
      maxLength: CONTENT_HTML_MAX,
      description: 'The content rendered to HTML (at most 64 KB: a post whose rendering would weigh more is refused) and sanitised with an allow-list (p, br, hr, strong, em, s, del, a, ul, ol, li, blockquote, code, pre, h1–h6; links http, https or mailto only, with rel="nofollow noopener noreferrer ugc"); raw HTML in the content is shown as text, never run.',
    }),
    preview: Type.Union([Text(PREVIEW_MAX), Type.Null()], {
      description: `What members without access read: your own preview as written, or else the automatic one: ${AUTO_PREVIEW_RULE} Null: they read no text of the post, only the offer to upgrade.`,
    }),
    preview_is_custom: Type.Boolean({ description: 'Whether `preview` is your own (set with `preview`; null goes back to the automatic one).' }),
    tier_min_id: Type.Union([Uuid, Type.Null()]),
    media: StoredMedia,
    pinned: Type.Boolean(),
    poll: Type.Union([Type.Ref(Poll), Type.Null()]),
    ...counts,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Post', title: 'Post' },
);

export const MemberPost = Type.Object(
  {
    id: Uuid,
    community_id: Uuid,
    locked: Type.Literal(false),
    content: Text(POST_CONTENT_MAX),
    content_html: Type.String({ maxLength: CONTENT_HTML_MAX, description: 'Sanitised HTML of the content (see the creator API), at most 64 KB.' }),
    tier_min_id: Type.Union([Uuid, Type.Null()]),
    media: StoredMedia,
    pinned: Type.Boolean(),
    poll: Type.Union([Type.Ref(MemberPoll), Type.Null()]),
    ...counts,
    kudoed: Type.Boolean({ description: 'Whether you gave it kudos.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'MemberPost', title: 'MemberPost', description: 'A post you can read in full.' },
);

export const LockedPost = Type.Object(
  {
    id: Uuid,
    community_id: Uuid,
    locked: Type.Literal(true),
    preview: Type.Union([Text(PREVIEW_MAX), Type.Null()], {
      description: `Plain-text teaser: the creator’s own as written, or else the automatic one: ${AUTO_PREVIEW_RULE} Null: no text of the post is shown, only the offer to upgrade.`,
    }),
    tier_min_id: Uuid,
    upgrade_tier_id: Type.Union([Uuid, Type.Null()], { description: 'The cheapest active tier of the community that unlocks the post (by monthly-normalised price); null if no active tier does.' }),
    upgrade_tier_name: Type.Union([Type.String({ maxLength: TIER_NAME_MAX }), Type.Null()]),
    upgrade_price_cents: Type.Union([Int64({ minimum: 0 }), Type.Null()], { description: 'Its price, in cents, per `upgrade_billing_period`.' }),
    upgrade_billing_period: Type.Union([Type.Union([Type.Literal('monthly'), Type.Literal('quarterly'), Type.Literal('yearly')]), Type.Null()]),
    pinned: Type.Boolean(),
    media_count: Int64({ minimum: 0, description: 'How many attachments the post has (their addresses are for members with access).' }),
    has_poll: Type.Boolean(),
    ...counts,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    $id: 'LockedPost',
    title: 'LockedPost',
    description: 'A post above your tier (or in a community you hold no live subscription to): a teaser and the tier that unlocks it; never its content, HTML, media addresses, poll question, options or results.',
  },
);

export const FeedItem = Type.Union([Type.Ref(MemberPost), Type.Ref(LockedPost)], { description: 'Discriminated by `locked`.' });

export const Comment = Type.Object(
  {
    id: Uuid,
    post_id: Uuid,
    member_id: Uuid,
    author_name: Type.String({ maxLength: MEMBER_NAME_MAX, description: 'The member’s full name.' }),
    body: Text(COMMENT_MAX),
    created_at: Timestamp,
  },
  { $id: 'Comment', title: 'Comment' },
);
export const MemberComment = Type.Object(
  {
    id: Uuid,
    post_id: Uuid,
    member_id: Uuid,
    author_name: AbbreviatedName,
    mine: Type.Boolean({ description: 'Whether you wrote it (you may delete it).' }),
    body: Text(COMMENT_MAX),
    created_at: Timestamp,
  },
  { $id: 'MemberComment', title: 'MemberComment' },
);

export const Kudos = Type.Object(
  { post_id: Uuid, kudoed: Type.Boolean({ description: 'Whether you give kudos now.' }), kudos_count: Int64({ minimum: 0 }) },
  { $id: 'Kudos', title: 'Kudos' },
);
export const DeletedPost = Type.Object({ id: Uuid, deleted: Type.Literal(true) });
export const DeletedComment = Type.Object({ id: Uuid, post_id: Uuid, deleted: Type.Literal(true) });
