import { useState } from 'preact/hooks';
import { api, messageOf, ok } from '../api/client.js';
import { count, money } from '../format.js';
import { Confirm } from '../ui/confirm.js';
import { Show, useLoad } from '../ui/load.js';
import { Badge, Card, Empty, ErrorMessage, Table } from '../ui/parts.js';
import { PERIOD, type Community, type Tier } from './communities-labels.js';
import { TierForm } from './communities-tier-form.js';

/**
 * The community's tiers (GET /tiers?community_id=) with their price, trial and paying
 * members; a new tier, an edit, a deactivation behind a confirmation, a reactivation. The
 * currency of a new tier is the one its siblings and the balance carry (the server's setting).
 */
export function TiersCard({ community, currency }: { community: Community; currency: string | undefined }) {
  const tiers = useLoad(async () => ok(await api.GET('/api/v1/tiers', { params: { query: { community_id: community.id, page: 1, limit: 100 } } })).data, [community.id]);
  const [editing, setEditing] = useState<string>();
  const [deactivating, setDeactivating] = useState<Tier>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState<string>();
  const tierCurrency = tiers.data?.[0]?.currency ?? currency;
  const paused = community.status === 'paused';

  async function reactivate(tier: Tier) {
    setBusy(tier.id);
    setError(undefined);
    try {
      ok(await api.PATCH('/api/v1/tiers/{id}', { params: { path: { id: tier.id } }, body: { is_active: true } }));
      tiers.reload();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(undefined);
    }
  }

  const saved = () => (setEditing(undefined), tiers.reload());
  return (
    <Card
      title="Tiers"
      actions={
        editing === 'new' || paused ? null : (
          <button type="button" class="primary" data-testid="new-tier" disabled={!tierCurrency} onClick={() => setEditing('new')}>
            New tier
          </button>
        )
      }
    >
      {paused ? <p class="notice">This community is paused: it takes no new tiers and no new members until you resume it.</p> : null}
      {editing === 'new' && tierCurrency ? <TierForm communityId={community.id} currency={tierCurrency} onSaved={saved} onCancel={() => setEditing(undefined)} /> : null}
      {error ? <ErrorMessage message={error} /> : null}
      <Show result={tiers} label="the tiers">
        {(list) =>
          list.length === 0 ? (
            <Empty>No tiers yet. Add one with “New tier” so members can subscribe.</Empty>
          ) : (
            <Table caption={`Tiers of ${community.name}`} head={['Tier', 'Price for new members', 'Free trial', 'Paying members', 'Status', 'Actions']}>
              {list.map((t) =>
                editing === t.id ? (
                  <tr data-testid="tier-row" data-tier-id={t.id}>
                    <td colSpan={6}>
                      <TierForm communityId={community.id} currency={t.currency} tier={t} onSaved={saved} onCancel={() => setEditing(undefined)} />
                    </td>
                  </tr>
                ) : (
                  <tr data-testid="tier-row" data-tier-id={t.id}>
                    <th scope="row">
                      {t.name}
                      {t.level != null ? <div class="muted">Level {t.level}</div> : null}
                    </th>
                    <td data-testid="tier-price">
                      {money(t.price_cents, t.currency)} per {PERIOD[t.billing_period]}
                    </td>
                    <td>{t.trial_days > 0 ? `${count(t.trial_days)} days` : 'None'}</td>
                    <td>{count(t.active_subscribers)}</td>
                    <td>{t.is_active ? <Badge tone="good">Open to new members</Badge> : <Badge>Deactivated</Badge>}</td>
                    <td>
                      <div class="row-actions">
                        <button type="button" onClick={() => setEditing(t.id)} aria-label={`Edit ${t.name}`}>
                          Edit
                        </button>
                        {t.is_active ? (
                          <button type="button" data-testid="deactivate-tier" onClick={() => setDeactivating(t)} aria-label={`Deactivate ${t.name}`}>
                            Deactivate
                          </button>
                        ) : (
                          <button type="button" data-testid="reactivate-tier" disabled={busy === t.id || paused} onClick={() => reactivate(t)} aria-label={`Reactivate ${t.name}`}>
                            {busy === t.id ? 'Reactivating…' : 'Reactivate'}
                          </button>
                        )}
                      </div>
                    </td>
                  </tr>
                ),
              )}
            </Table>
          )
        }
      </Show>
      {deactivating ? (
        <Confirm
          title={`Deactivate ${deactivating.name}?`}
          confirmLabel="Deactivate tier"
          danger
          onConfirm={async () => ok(await api.DELETE('/api/v1/tiers/{id}', { params: { path: { id: deactivating.id } } }))}
          onClose={() => setDeactivating(undefined)}
          onDone={tiers.reload}
        >
          <p>New members will no longer be able to choose this tier, and its price is archived at the payment processor.</p>
          <p>
            {deactivating.active_subscribers === 0 ? 'No one pays for it now.' : `Its ${count(deactivating.active_subscribers)} paying members keep their subscriptions, at the price each of them pays now.`} You can
            reactivate the tier later.
          </p>
        </Confirm>
      ) : null}
    </Card>
  );
}
