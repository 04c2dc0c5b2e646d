import './feed.css';
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import { href, navigate, type Route } from '../router.js';
import { Show, useLoad } from '../ui/load.js';
import { Empty, Field, Pager, valueOf } from '../ui/parts.js';
import { Composer } from './feed-composer.js';
import { loadLookup, type Lookup } from './feed-lookup.js';
import { PostRow } from './feed-post.js';

/**
 * The creator's posts as GET /posts lists them (pinned first, then newest), in one community
 * or all, from the hash (#/feed?community=ID&page=2); a composer for a new post above them,
 * and each post's edit, delete and comment moderation in its row.
 */
export function Feed({ route }: { route: Route }) {
  const community = route.query.get('community') || undefined;
  const page = Math.max(1, Number(route.query.get('page')) || 1);
  const lookup = useLoad(loadLookup, []);
  const [version, setVersion] = useState(0);
  const posts = useLoad(
    async () => ok(await api.GET('/api/v1/posts', { params: { query: { page, limit: 20, community_id: community } } })),
    [page, community, version],
  );
  const [composing, setComposing] = useState(false);
  const [notice, setNotice] = useState<string>();
  // The names are read again with the posts: a tier or community made since (in another tab,
  // or by a script) must name its posts and be offered in the composer.
  const changed = (message?: string) => {
    setNotice(message);
    setVersion((n) => n + 1);
    lookup.reload();
  };

  return (
    <>
      <div class="page-head">
        <h1>Feed</h1>
        <button
          type="button"
          class="primary"
          data-testid="new-post"
          aria-expanded={composing}
          disabled={!lookup.data?.communities.length}
          onClick={() => {
            setNotice(undefined);
            setComposing(true);
            lookup.reload();
          }}
        >
          New post
        </button>
      </div>
      <p class="notice-slot" role="status">
        {notice ? <span class="notice">{notice}</span> : null}
      </p>
      <Show result={lookup} label="your communities">
        {(names) =>
          names.communities.length === 0 ? (
            <Empty>
              Posts live in a community: <a href={href('communities')}>create your first community</a>, then write to its members here.
            </Empty>
          ) : (
            <>
              {composing ? (
                <Composer
                  communities={names.communities}
                  communityId={community ?? ''}
                  onSaved={() => {
                    setComposing(false);
                    changed('Post published.');
                  }}
                  onCancel={() => setComposing(false)}
                />
              ) : null}
              <Filter names={names} community={community} />
              <Show result={posts} label="posts">
                {({ data, pagination }) =>
                  data.length === 0 ? (
                    <Empty>
                      {community ? 'No posts in this community yet.' : 'No posts yet.'} Choose “New post” to write to your members: a workout tip, an
                      announcement or a poll.
                    </Empty>
                  ) : (
                    <>
                      {data.map((p) => (
                        <PostRow key={p.id} post={p} lookup={names} onChanged={changed} />
                      ))}
                      <Pager
                        page={pagination.page}
                        pages={pagination.pages}
                        total={pagination.total}
                        noun="posts"
                        onPage={(n) => navigate('feed', { community, page: n })}
                      />
                    </>
                  )
                }
              </Show>
            </>
          )
        }
      </Show>
    </>
  );
}

/** Which community's posts to list; its label avoids "community", which names the composer's field. */
function Filter({ names, community }: { names: Lookup; community: string | undefined }) {
  return (
    <div class="filters feed-filters">
      <Field id="feed-filter" label="Show posts from">
        <select id="feed-filter" value={community ?? ''} onChange={(e) => navigate('feed', { community: valueOf(e) })}>
          <option value="">All communities</option>
          {names.communities.map((c) => (
            <option value={c.id}>{c.name}</option>
          ))}
        </select>
      </Field>
    </div>
  );
}
