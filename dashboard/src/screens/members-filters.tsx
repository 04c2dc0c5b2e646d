import { useEffect, useRef, useState } from 'preact/hooks';
import type { Schemas } from '../api/types.js';
import type { Loaded } from '../ui/load.js';
import { ErrorMessage, Field, valueOf } from '../ui/parts.js';
import { setFilters, SORTS, STATUSES, type Filters, type MemberStatus, type Sort } from './members-query.js';

type Community = Schemas['Community'];
type Tier = Schemas['Tier'];

/** Typing waits this long after the last key before the list asks again. */
const SEARCH_DELAY_MS = 300;

/**
 * Every filter of GET /members, each written to the hash as it changes (so a reload or a
 * shared link keeps them). The tier select lists the chosen community's tiers only, since a
 * tier filter means "in the tier's community".
 */
export function MemberFilters({ filters, communities, tiers }: { filters: Filters; communities: Community[]; tiers: Loaded<Tier[]> }) {
  const communityName = (id: string) => communities.find((c) => c.id === id)?.name;

  return (
    <form class="members-filters" role="search" aria-label="Filter members" onSubmit={(e) => e.preventDefault()}>
      <fieldset class="chips" aria-describedby="status-hint">
        <legend>Status</legend>
        {[{ value: '' as const, label: 'All' }, ...STATUSES].map((s) => (
          <label class={filters.status === s.value ? 'on' : ''}>
            <input
              type="radio"
              name="member-status"
              value={s.value}
              checked={filters.status === s.value}
              onChange={() => setFilters({ status: s.value as MemberStatus | '' })}
              data-testid={`status-chip-${s.value || 'all'}`}
            />
            {s.label}
          </label>
        ))}
      </fieldset>
      <p id="status-hint" class="hint members-hint">
        At risk: a failing payment, a cancellation at the end of the period, or no activity for 14 days. Churned: no subscription that gives access.
      </p>
      <div class="filters">
        <SearchField value={filters.q} onSearch={(q) => setFilters({ q })} />
        <Field id="members-community" label="Community">
          <select id="members-community" value={filters.community_id} onChange={(e) => setFilters({ community_id: valueOf(e), tier_id: '' })}>
            <option value="">All communities</option>
            {communities.map((c) => (
              <option value={c.id}>{c.name}</option>
            ))}
          </select>
        </Field>
        <Field id="members-tier" label="Tier">
          <select id="members-tier" value={filters.tier_id} onChange={(e) => setFilters({ tier_id: valueOf(e) })}>
            <option value="">All tiers</option>
            {(tiers.data ?? []).map((t) => (
              <option value={t.id}>{filters.community_id || communities.length < 2 ? t.name : `${t.name} (${communityName(t.community_id) ?? 'another community'})`}</option>
            ))}
          </select>
        </Field>
        <Field id="members-joined-after" label="Joined after">
          <input id="members-joined-after" type="date" value={filters.joined_after} onChange={(e) => setFilters({ joined_after: valueOf(e) })} />
        </Field>
        <Field id="members-sort" label="Sort by">
          <select id="members-sort" value={filters.sort} onChange={(e) => setFilters({ sort: valueOf(e) as Sort })}>
            {SORTS.map((s) => (
              <option value={s.value}>{s.label}</option>
            ))}
          </select>
        </Field>
      </div>
      {tiers.state === 'error' ? <ErrorMessage message={`The tiers could not be listed: ${tiers.error}`} /> : null}
    </form>
  );
}

/** The search box: its own text while typing, the hash's once typing pauses. */
function SearchField({ value, onSearch }: { value: string; onSearch: (q: string) => void }) {
  const [text, setText] = useState(value);
  const sent = useRef(value);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  // A search this box did not send (a link, the back button, "clear the filters") replaces
  // the text; the echo of its own search does not, as the person may have typed on since.
  useEffect(() => {
    if (value === sent.current) return;
    clearTimeout(timer.current);
    sent.current = value;
    setText(value);
  }, [value]);
  useEffect(() => () => clearTimeout(timer.current), []);
  function type(next: string) {
    setText(next);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      if (next.trim() === sent.current) return;
      sent.current = next.trim();
      onSearch(next.trim());
    }, SEARCH_DELAY_MS);
  }
  return (
    <Field id="members-search" label="Search name or e-mail">
      <input
        id="members-search"
        type="search"
        value={text}
        maxLength={200}
        autocomplete="off"
        onInput={(e) => type(valueOf(e))}
        data-testid="members-search"
      />
    </Field>
  );
}
