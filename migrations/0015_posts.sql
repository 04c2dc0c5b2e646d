-- The community feed: posts, their polls, and members' engagement (issue #14, DESIGN §5).
--
-- A post is written rarely and read often: its HTML and plain-text preview are rendered once
-- when it is written, and its counts are kept in post_counts by the write that changes them
-- (a kudos, a comment, a vote, a batch of views), so a page of the feed reads rows, never
-- counts them.

create table posts (
  id uuid primary key,
  creator_id uuid not null references creators (id),
  community_id uuid not null references communities (id),
  -- The markdown as the creator wrote it, and its sanitised rendering.
  content text not null,
  content_html text not null,
  -- What a member without access sees: the creator's own preview when set, else the first
  -- ~140 characters of the content as plain text.
  preview text,
  preview_auto text not null,
  tier_min_id uuid references tiers (id),
  media jsonb not null default '[]',
  pinned boolean not null default false,
  poll_question text,
  poll_options text[],
  poll_multiple boolean,
  poll_closes_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  -- Deleted posts leave every feed and their engagement stops counting; the rows stay
  -- until a purge, so deleting a post with millions of views is one row write.
  deleted_at timestamptz,
  check ((poll_question is null) = (poll_options is null) and (poll_options is null) = (poll_multiple is null))
);
-- The feeds in their order (pinned first, newest next): a page is an index walk.
create index posts_community_feed_idx on posts (community_id, pinned desc, created_at desc, id desc) where deleted_at is null;
create index posts_creator_feed_idx on posts (creator_id, pinned desc, created_at desc, id desc) where deleted_at is null;

-- Counts apart from the post: narrow rows that every engagement write updates (HOT, with
-- room left on each page), so the wide post row is never rewritten by a kudos or a view.
create table post_counts (
  post_id uuid primary key references posts (id),
  kudos_count int not null default 0 check (kudos_count >= 0),
  comments_count int not null default 0 check (comments_count >= 0),
  views_count bigint not null default 0 check (views_count >= 0),
  -- Votes per poll option (same length as posts.poll_options) and members who voted.
  poll_votes int[],
  poll_voters int not null default 0 check (poll_voters >= 0)
) with (fillfactor = 70);

-- Posts per community not deleted: the feed's total without counting 100k rows a page.
alter table communities add column posts_count int not null default 0 check (posts_count >= 0);

create table post_kudos (
  post_id uuid not null references posts (id),
  member_id uuid not null references members (id),
  creator_id uuid not null references creators (id),
  created_at timestamptz not null,
  primary key (post_id, member_id)
);

create table post_comments (
  id uuid primary key,
  post_id uuid not null references posts (id),
  creator_id uuid not null references creators (id),
  member_id uuid not null references members (id),
  body text not null,
  created_at timestamptz not null
);
-- A post's conversation, oldest first.
create index post_comments_post_idx on post_comments (post_id, created_at, id);
-- A member's comments in a creator's communities (the directory's posts_count_30d).
create index post_comments_member_idx on post_comments (creator_id, member_id, created_at);

-- One view per member, post and UTC day; the primary key is the uniqueness rule. The most
-- written table of the feed (a row per reader per day): only the post is a foreign key. The
-- member and creator ids come from the reader's token and the post's own row in the same
-- statement (posts/views.ts), and checking them again cost ~10 % of each view's write.
create table post_views (
  post_id uuid not null references posts (id),
  member_id uuid not null,
  day date not null,
  creator_id uuid not null,
  primary key (post_id, member_id, day)
);

-- A member's choices in a post's poll: one row per chosen option.
create table poll_votes (
  post_id uuid not null references posts (id),
  member_id uuid not null references members (id),
  option smallint not null check (option >= 0),
  creator_id uuid not null references creators (id),
  created_at timestamptz not null,
  primary key (post_id, member_id, option)
);
