import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import { count, dateTime } from '../format.js';
import { Confirm } from '../ui/confirm.js';
import { Badge } from '../ui/parts.js';
import { Comments } from './feed-comments.js';
import { Composer } from './feed-composer.js';
import { lockLabel, type Lookup, type Post } from './feed-lookup.js';

const plural = (n: number, one: string, many: string) => `${count(n)} ${n === 1 ? one : many}`;

/**
 * The post's HTML as the API rendered and sanitised it, with its headings drawn as bold
 * paragraphs: a "# Title" in a post must not become a second h1 of the page (heading order).
 */
const withoutHeadings = (html: string) => html.replace(/<(\/?)h[1-6]\b[^>]*>/g, (_, close: string) => (close ? '</p>' : '<p class="post-heading">'));

/** One post as the creator manages it: what it says, who reads it, its counts, its poll, its comments. */
export function PostRow({ post, lookup, onChanged }: { post: Post; lookup: Lookup; onChanged: (message?: string) => void }) {
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [showComments, setShowComments] = useState(false);
  const community = lookup.communities.find((c) => c.id === post.community_id);
  const commentsId = `comments-${post.id}`;

  if (editing) {
    return (
      <div data-testid="post-row" data-post-id={post.id}>
        <Composer
          post={post}
          communities={lookup.communities}
          communityId={post.community_id}
          onSaved={() => {
            setEditing(false);
            onChanged('Post saved.');
          }}
          onCancel={() => setEditing(false)}
        />
      </div>
    );
  }

  return (
    <article class="card post" data-testid="post-row" data-post-id={post.id} aria-label={`Post of ${dateTime(post.created_at)}`}>
      <div class="post-meta">
        {post.pinned ? (
          <Badge tone="warn">
            <span data-testid="post-pinned">Pinned</span>
          </Badge>
        ) : null}
        <span class={`badge lock ${post.tier_min_id ? 'locked' : 'open'}`}>
          <span class="sr-only">Who can read it: </span>
          <span data-testid="post-lock" data-tier-id={post.tier_min_id ?? ''}>
            {lockLabel(post, lookup.tiers)}
          </span>
        </span>
        <span>{community?.name ?? 'Another community'}</span>
        <span>
          {dateTime(post.created_at)}
          {post.updated_at !== post.created_at ? ` · edited ${dateTime(post.updated_at)}` : ''}
        </span>
      </div>
      <div class="post-body" dangerouslySetInnerHTML={{ __html: withoutHeadings(post.content_html) }} />
      {post.tier_min_id && post.preview ? (
        <p class="post-preview">
          <span class="preview-label">{post.preview_is_custom ? 'Your preview' : 'Automatic preview'} for the others:</span> {post.preview}
        </p>
      ) : null}
      {post.media.length ? (
        <ul class="post-media" aria-label="Attachments">
          {post.media.map((m, i) => (
            <li>
              <a href={m.url} target="_blank" rel="noopener noreferrer">
                {m.type === 'image' ? 'Image' : m.type === 'video' ? 'Video' : 'Audio'} {i + 1}
              </a>{' '}
              <span class="url">{m.url}</span>
            </li>
          ))}
        </ul>
      ) : null}
      {post.poll ? <PollResults poll={post.poll} /> : null}
      <ul class="post-counts" aria-label="Counts">
        <li data-testid="post-kudos">{plural(post.kudos_count, 'kudos', 'kudos')}</li>
        <li data-testid="post-comments">{plural(post.comments_count, 'comment', 'comments')}</li>
        <li data-testid="post-views" title="Members who opened it, once a day each">
          {plural(post.views_count, 'view', 'views')}
        </li>
      </ul>
      <div class="actions">
        <button type="button" aria-expanded={showComments} aria-controls={commentsId} data-testid="post-comments-toggle" onClick={() => setShowComments(!showComments)}>
          {showComments ? 'Hide comments' : `Show comments (${count(post.comments_count)})`}
        </button>
        <button type="button" data-testid="post-edit" onClick={() => setEditing(true)}>
          Edit
        </button>
        <button type="button" class="link-danger" data-testid="post-delete" onClick={() => setDeleting(true)}>
          Delete
        </button>
      </div>
      {showComments ? <Comments postId={post.id} id={commentsId} onDeleted={() => onChanged()} /> : null}
      {deleting ? (
        <Confirm
          title="Delete this post?"
          confirmLabel="Delete post"
          danger
          onConfirm={async () => ok(await api.DELETE('/api/v1/posts/{id}', { params: { path: { id: post.id } } }))}
          onClose={() => setDeleting(false)}
          onDone={() => onChanged('Post deleted.')}
        >
          <p>
            The post of {dateTime(post.created_at)} disappears from every feed at once. Its {plural(post.kudos_count, 'kudos', 'kudos')},{' '}
            {plural(post.comments_count, 'comment', 'comments')}, {plural(post.views_count, 'view', 'views')}
            {post.poll?.voters ? ` and the poll votes of ${plural(post.poll.voters, 'member', 'members')}` : ''} stop counting anywhere. It cannot be brought back.
          </p>
        </Confirm>
      ) : null}
    </article>
  );
}

function PollResults({ poll }: { poll: NonNullable<Post['poll']> }) {
  const most = Math.max(1, ...poll.options.map((o) => o.votes));
  return (
    <div class="poll" data-testid="post-poll">
      <p class="poll-question">
        <strong>Poll:</strong> {poll.question}
      </p>
      <ul class="poll-options">
        {poll.options.map((o) => (
          <li>
            <span class="poll-text">{o.text}</span>
            <span class="poll-bar" aria-hidden="true">
              <span style={{ width: `${(o.votes / most) * 100}%` }} />
            </span>
            <span class="poll-votes">{plural(o.votes, 'vote', 'votes')}</span>
          </li>
        ))}
      </ul>
      <p class="hint">
        {plural(poll.voters, 'member voted', 'members voted')}
        {poll.multiple_choice ? ', several choices each' : ''}
        {poll.closed ? ` · closed ${dateTime(poll.closes_at)}` : poll.closes_at ? ` · closes ${dateTime(poll.closes_at)}` : ' · open'}
      </p>
    </div>
  );
}
