import type { ColumnType, Generated } from 'kysely';

/** Tables of the community feed (migrations/0015_posts.sql). */

export type MediaType = 'image' | 'video' | 'audio';
export interface MediaItem {
  type: MediaType;
  url: string;
}

export interface PostsTable {
  id: string;
  creator_id: string;
  community_id: string;
  content: string;
  content_html: string;
  preview: string | null;
  /** The automatic preview (null: none, the text is under 60 characters); recomputed when stale (0019). */
  preview_auto: string | null;
  preview_auto_stale: Generated<boolean>;
  tier_min_id: string | null;
  media: ColumnType<MediaItem[], string, string>;
  pinned: Generated<boolean>;
  poll_question: string | null;
  poll_options: string[] | null;
  poll_multiple: boolean | null;
  poll_closes_at: Date | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface PostCountsTable {
  post_id: string;
  /** The post's creator (migration 0029: the shard key). */
  creator_id: string;
  kudos_count: Generated<number>;
  comments_count: Generated<number>;
  /** bigint: the driver returns text. */
  views_count: ColumnType<string, string | number | undefined, string | number>;
  poll_votes: number[] | null;
  poll_voters: Generated<number>;
}

export interface PostKudosTable {
  post_id: string;
  member_id: string;
  creator_id: string;
  created_at: Date;
}

export interface PostCommentsTable {
  id: string;
  post_id: string;
  creator_id: string;
  member_id: string;
  body: string;
  created_at: Date;
}

export interface PostViewsTable {
  post_id: string;
  member_id: string;
  day: string;
  creator_id: string;
}

export interface PollVotesTable {
  post_id: string;
  member_id: string;
  option: number;
  creator_id: string;
  created_at: Date;
}

/** The feed's tables, as the Database interface (types.ts) lists them. */
export interface FeedTables {
  posts: PostsTable;
  post_counts: PostCountsTable;
  post_kudos: PostKudosTable;
  post_comments: PostCommentsTable;
  post_views: PostViewsTable;
  poll_votes: PollVotesTable;
}
