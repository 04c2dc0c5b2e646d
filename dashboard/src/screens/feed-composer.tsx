import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, messageOf, ok } from '../api/client.js';
import { useLoad } from '../ui/load.js';
import { Card, ErrorMessage, Field, valueOf } from '../ui/parts.js';
import { MediaEditor, PollEditor } from './feed-composer-parts.js';
import { createBody, draftOf, editBody, fieldName, pollFixed, type Draft } from './feed-draft.js';
import { tierOptionLabel, type Community, type Post } from './feed-lookup.js';

type Failure = { message: string; details: Array<{ field: string; message: string }> };

/**
 * Writing a post (POST /posts) or editing one (PATCH /posts/{id}): the community, who may
 * read it (the community's tiers from GET /tiers, or everyone), the markdown text, the
 * preview for members who may not, attachments, pinning and a poll. The API validates; its
 * message and each field it names are shown in the composer's words.
 */
export function Composer(props: { post?: Post; communities: Community[]; communityId: string; onSaved: (post: Post) => void; onCancel: () => void }) {
  const { post, communities } = props;
  const [draft, setDraft] = useState<Draft>(() => draftOf(post, props.communityId || communities[0]?.id || ''));
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Failure>();
  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));
  const tiers = useLoad(
    async () =>
      draft.community_id ? ok(await api.GET('/api/v1/tiers', { params: { query: { page: 1, limit: 100, community_id: draft.community_id } } })).data : [],
    [draft.community_id],
  );
  // Keyboard and screen-reader users land in the form they just opened, not on the button.
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => form.current?.querySelector<HTMLElement>(post ? 'textarea' : 'select')?.focus(), []);
  const prefix = post ? `edit-${post.id}` : 'new';
  const id = (name: string) => `${prefix}-${name}`;

  async function save(event: Event) {
    event.preventDefault();
    setBusy(true);
    setFailure(undefined);
    try {
      const saved = post
        ? ok(await api.PATCH('/api/v1/posts/{id}', { params: { path: { id: post.id } }, body: editBody(draft, post) })).data
        : ok(await api.POST('/api/v1/posts', { body: createBody(draft) })).data;
      props.onSaved(saved);
    } catch (err) {
      setFailure({ message: messageOf(err), details: err instanceof ApiError ? err.details : [] });
      setBusy(false);
    }
  }

  return (
    <Card title={post ? 'Edit post' : 'New post'} class="composer">
      <form ref={form} onSubmit={save} noValidate>
        <div class="grid2">
          <Field id={id('community')} label="Community" hint={post ? 'A post stays in the community it was written in.' : undefined}>
            <select
              id={id('community')}
              value={draft.community_id}
              disabled={!!post}
              aria-describedby={post ? `${id('community')}-hint` : undefined}
              onChange={(e) => set({ community_id: valueOf(e), tier: '' })}
            >
              {communities.map((c) => (
                <option value={c.id}>{c.name}</option>
              ))}
            </select>
          </Field>
          <Field id={id('tier')} label="Who can read it" hint="Members of this tier or a higher one read it in full; the others see the preview and an offer to upgrade.">
            <select id={id('tier')} value={draft.tier} aria-describedby={`${id('tier')}-hint`} onChange={(e) => set({ tier: valueOf(e) })}>
              <option value="">Everyone in the community</option>
              {(tiers.data ?? []).map((t) => (
                <option value={t.id}>{tierOptionLabel(t)}</option>
              ))}
            </select>
          </Field>
        </div>
        {tiers.state === 'error' ? <ErrorMessage message={`The tiers could not be read: ${tiers.error}`} /> : null}
        <Field id={id('text')} label="Text">
          <textarea id={id('text')} value={draft.content} rows={8} aria-describedby={`${id('text')}-syntax`} onInput={(e) => set({ content: valueOf(e) })} />
        </Field>
        <MarkdownHint id={`${id('text')}-syntax`} />
        {draft.tier ? (
          <Field id={id('preview')} label="Preview for members who cannot read it (optional)" hint="Plain text, up to 280 characters. Empty: the start of the post, unless it is short.">
            <textarea id={id('preview')} class="short" value={draft.preview} aria-describedby={`${id('preview')}-hint`} onInput={(e) => set({ preview: valueOf(e) })} />
          </Field>
        ) : null}
        <MediaEditor media={draft.media} onChange={(media) => set({ media })} />
        <PollEditor poll={draft.poll} fixed={pollFixed(post)} onChange={(poll) => set({ poll })} />
        <label class="check">
          <input type="checkbox" checked={draft.pinned} onChange={(e) => set({ pinned: e.currentTarget.checked })} />
          Pin it to the top of the feed
        </label>
        {failure ? <Failed failure={failure} /> : null}
        <div class="actions">
          <button type="submit" class="primary" data-testid="composer-submit" disabled={busy || !draft.community_id} aria-busy={busy}>
            {busy ? (post ? 'Saving…' : 'Publishing…') : post ? 'Save changes' : 'Publish'}
          </button>
          <button type="button" onClick={props.onCancel} disabled={busy}>
            Cancel
          </button>
        </div>
      </form>
    </Card>
  );
}

/** The light markdown the API renders (markdown-it without images or tables; line breaks kept). */
function MarkdownHint({ id }: { id: string }) {
  return (
    <p id={id} class="hint markdown-hint">
      Up to 4,000 characters of markdown: <code>**bold**</code> <code>*italic*</code> <code>~~struck~~</code> <code>[link](https://…)</code>{' '}
      <code># Heading</code> <code>- list</code> <code>1. list</code> <code>&gt; quote</code> <code>`code`</code>. Line breaks are kept; images go in
      the attachments.
    </p>
  );
}

function Failed({ failure }: { failure: Failure }) {
  return (
    <div class="error" role="alert">
      <p>{failure.message}</p>
      {failure.details.length ? (
        <ul>
          {failure.details.map((d) => (
            <li>
              {fieldName(d.field)}: {d.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
