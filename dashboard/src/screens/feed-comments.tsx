import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import type { Schemas } from '../api/types.js';
import { dateTime } from '../format.js';
import { href } from '../router.js';
import { Confirm } from '../ui/confirm.js';
import { Show, useLoad } from '../ui/load.js';
import { Empty, Pager } from '../ui/parts.js';

type Comment = Schemas['Comment'];

/**
 * A post's comments, oldest first as GET /posts/{id}/comments lists them, each removable
 * after a confirmation (moderation). `onDeleted` lets the post re-read its comment count.
 */
export function Comments({ postId, id, onDeleted }: { postId: string; id: string; onDeleted: () => void }) {
  const [page, setPage] = useState(1);
  const comments = useLoad(async () => ok(await api.GET('/api/v1/posts/{id}/comments', { params: { path: { id: postId }, query: { page, limit: 20 } } })), [postId, page]);
  const [removing, setRemoving] = useState<Comment>();

  return (
    <section id={id} class="comments" aria-label="Comments">
      <Show result={comments} label="comments">
        {({ data, pagination }) =>
          data.length === 0 ? (
            <Empty>No comments on this post yet.</Empty>
          ) : (
            <>
              <ul class="comment-list">
                {data.map((c) => (
                  <li class="comment" data-testid="comment-row" data-comment-id={c.id}>
                    <div class="comment-meta">
                      <a href={href(`member/${c.member_id}`)}>{c.author_name}</a> · <span>{dateTime(c.created_at)}</span>
                    </div>
                    <p class="comment-body">{c.body}</p>
                    <button type="button" class="link-danger" data-testid="comment-delete" onClick={() => setRemoving(c)}>
                      Delete<span class="sr-only"> the comment by {c.author_name}</span>
                    </button>
                  </li>
                ))}
              </ul>
              {pagination.pages > 1 ? <Pager page={pagination.page} pages={pagination.pages} total={pagination.total} noun="comments" onPage={setPage} /> : null}
            </>
          )
        }
      </Show>
      {removing ? (
        <Confirm
          title="Delete this comment?"
          confirmLabel="Delete comment"
          danger
          onConfirm={async () => ok(await api.DELETE('/api/v1/posts/{id}/comments/{comment_id}', { params: { path: { id: postId, comment_id: removing.id } } }))}
          onClose={() => setRemoving(undefined)}
          onDone={() => {
            comments.reload();
            onDeleted();
          }}
        >
          <p>
            The comment by {removing.author_name} of {dateTime(removing.created_at)} disappears for every member at once, and the post's comment count
            drops by one. This cannot be undone.
          </p>
          <blockquote class="quoted">{removing.body.length > 280 ? `${removing.body.slice(0, 280)}…` : removing.body}</blockquote>
        </Confirm>
      ) : null}
    </section>
  );
}
