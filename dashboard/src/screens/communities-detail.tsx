import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import { count, date, dateTime, money } from '../format.js';
import { Confirm } from '../ui/confirm.js';
import { Show, useLoad } from '../ui/load.js';
import { Badge, Card, Stat } from '../ui/parts.js';
import { CommunityForm } from './communities-form.js';
import { CATEGORY } from './communities-labels.js';
import { TiersCard } from './communities-tiers.js';

/**
 * One community (GET /communities/{id}): its live figures, its settings with an edit form,
 * pause and resume behind confirmations that say what DELETE and /resume do, and its tiers.
 */
export function CommunityDetail({ id, currency, onChanged }: { id: string; currency: string | undefined; onChanged: () => void }) {
  const community = useLoad(async () => ok(await api.GET('/api/v1/communities/{id}', { params: { path: { id } } })).data, [id]);
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState<'pause' | 'resume'>();
  const changed = () => (community.reload(), onChanged());
  return (
    <Show result={community} label="the community">
      {(c) => (
        <>
          <Card
            title={c.name}
            class="community-detail"
            actions={
              <>
                {editing ? null : (
                  <button type="button" data-testid="edit-community" onClick={() => setEditing(true)}>
                    Edit
                  </button>
                )}
                {c.status === 'active' ? (
                  <button type="button" data-testid="pause-community" onClick={() => setConfirming('pause')}>
                    Pause
                  </button>
                ) : (
                  <button type="button" class="primary" data-testid="resume-community" onClick={() => setConfirming('resume')}>
                    Resume
                  </button>
                )}
              </>
            }
          >
            <p>
              {c.status === 'active' ? <Badge tone="good">Active</Badge> : <Badge tone="warn">Paused since {date(c.paused_at)}</Badge>}{' '}
              {c.is_public ? 'Listed in public discovery.' : 'Not listed in public discovery: members join by its address.'}
            </p>
            <div class="stats">
              <Stat testId="community-members" label="Members with access" value={count(c.members_count)} hint="trialing, paying or with a payment being retried" />
              <Stat testId="community-paying" label="Paying members" value={count(c.active_subscribers)} />
              <Stat testId="community-mrr" label="MRR" value={currency ? money(c.mrr_cents, currency) : '—'} hint="monthly recurring revenue, before the platform fee" />
            </div>
            {editing ? (
              <CommunityForm community={c} onSaved={() => (setEditing(false), changed())} onCancel={() => setEditing(false)} />
            ) : (
              <dl class="facts">
                <dt>Address</dt>
                <dd>
                  <code data-testid="community-slug">{c.slug}</code> <small class="hint">permanent: it is the community's address</small>
                </dd>
                <dt>Category</dt>
                <dd>{CATEGORY[c.category]}</dd>
                <dt>Description</dt>
                <dd>{c.description || <span class="muted">None</span>}</dd>
                <dt>Cover image</dt>
                <dd>{c.cover_image_url ? <a href={c.cover_image_url}>{c.cover_image_url}</a> : <span class="muted">None</span>}</dd>
                <dt>Created</dt>
                <dd>{dateTime(c.created_at)}</dd>
              </dl>
            )}
          </Card>
          <TiersCard community={c} currency={currency} />
          {confirming === 'pause' ? (
            <Confirm
              title={`Pause ${c.name}?`}
              confirmLabel="Pause community"
              danger
              onConfirm={async () => ok(await api.DELETE('/api/v1/communities/{id}', { params: { path: { id: c.id } } }))}
              onClose={() => setConfirming(undefined)}
              onDone={changed}
            >
              <ul>
                <li>It leaves public discovery and takes no new members.</li>
                <li>
                  {c.members_count === 0
                    ? 'No one has access to it now.'
                    : `Its ${count(c.members_count)} members keep their access until the end of the period they have paid for; their subscriptions are not renewed after it.`}
                </li>
                <li>Nothing is deleted: its tiers, programs and posts stay, and you can resume it at any time.</li>
              </ul>
            </Confirm>
          ) : null}
          {confirming === 'resume' ? (
            <Confirm
              title={`Resume ${c.name}?`}
              confirmLabel="Resume community"
              onConfirm={async () => ok(await api.POST('/api/v1/communities/{id}/resume', { params: { path: { id: c.id } } }))}
              onClose={() => setConfirming(undefined)}
              onDone={changed}
            >
              <ul>
                <li>It is open to new members again, and listed in public discovery if it is public.</li>
                <li>Subscriptions the pause had set to end renew again as usual; those members cancelled themselves stay cancelled.</li>
              </ul>
            </Confirm>
          ) : null}
        </>
      )}
    </Show>
  );
}
