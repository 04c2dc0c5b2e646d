import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../api/client.js';
import { Field, FormActions, valueOf } from '../ui/parts.js';
import { CATEGORY, type Community } from './communities-labels.js';

/** What the address would be for a name: lower case, a-z 0-9 and dashes, as the API's slug rule. */
const slugOf = (name: string) =>
  name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);

/**
 * Creates a community, or edits one. The slug is its address and the API never changes it
 * (PATCH with a slug is 400), so it is typed only here at creation and shown read-only after.
 */
export function CommunityForm({ community, onSaved, onCancel }: { community?: Community; onSaved: (c: Community) => void; onCancel: () => void }) {
  const editing = Boolean(community);
  const [name, setName] = useState(community?.name ?? '');
  const [slug, setSlug] = useState(community?.slug ?? '');
  const [slugTouched, setSlugTouched] = useState(false);
  const [category, setCategory] = useState<Community['category']>(community?.category ?? 'musculacao');
  const [description, setDescription] = useState(community?.description ?? '');
  const [isPublic, setIsPublic] = useState(community?.is_public ?? true);
  const [cover, setCover] = useState(community?.cover_image_url ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const prefix = community ? `community-${community.id}` : 'new-community';

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const saved = community
        ? ok(
            await api.PATCH('/api/v1/communities/{id}', {
              params: { path: { id: community.id } },
              body: { name, category, is_public: isPublic, description: description.trim() || null, cover_image_url: cover.trim() || null },
            }),
          ).data
        : ok(
            await api.POST('/api/v1/communities', {
              body: { name, slug, category, is_public: isPublic, ...(description.trim() ? { description } : {}), ...(cover.trim() ? { cover_image_url: cover.trim() } : {}) },
            }),
          ).data;
      onSaved(saved);
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} class="stack-form" data-testid={editing ? 'community-edit-form' : 'community-create-form'}>
      <Field id={`${prefix}-name`} label="Name">
        <input
          id={`${prefix}-name`}
          required
          maxLength={120}
          value={name}
          onInput={(e) => {
            setName(valueOf(e));
            if (!editing && !slugTouched) setSlug(slugOf(valueOf(e)));
          }}
        />
      </Field>
      {editing ? (
        <div class="field">
          <span class="field-label">Address</span>
          <span>
            <code data-testid="community-slug">{slug}</code> <small class="hint">permanent: it is the community's address</small>
          </span>
        </div>
      ) : (
        <Field id={`${prefix}-slug`} label="Address" hint="3 to 63 characters: lower-case letters, digits and dashes. It cannot be changed later: it is the community's address.">
          <input
            id={`${prefix}-slug`}
            required
            pattern="[a-z0-9\-]{3,63}"
            maxLength={63}
            aria-describedby={`${prefix}-slug-hint`}
            value={slug}
            onInput={(e) => (setSlug(valueOf(e)), setSlugTouched(true))}
          />
        </Field>
      )}
      <Field id={`${prefix}-category`} label="Category">
        <select id={`${prefix}-category`} value={category} onChange={(e) => setCategory(valueOf(e) as Community['category'])}>
          {Object.entries(CATEGORY).map(([key, label]) => (
            <option value={key}>{label}</option>
          ))}
        </select>
      </Field>
      <Field id={`${prefix}-description`} label="Description" hint="Optional, up to 2,000 characters.">
        <textarea id={`${prefix}-description`} maxLength={2000} aria-describedby={`${prefix}-description-hint`} value={description} onInput={(e) => setDescription(valueOf(e))} />
      </Field>
      <Field id={`${prefix}-cover`} label="Cover image link" hint="Optional: an http(s) address of the image.">
        <input id={`${prefix}-cover`} type="url" maxLength={2048} aria-describedby={`${prefix}-cover-hint`} value={cover} onInput={(e) => setCover(valueOf(e))} />
      </Field>
      <label class="check">
        <input type="checkbox" checked={isPublic} onChange={(e) => setIsPublic(e.currentTarget.checked)} /> Listed in public discovery
      </label>
      <FormActions error={error} busy={busy} label={editing ? 'Save changes' : 'Create community'} onCancel={onCancel} />
    </form>
  );
}
