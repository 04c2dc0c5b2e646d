import './members.css';
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client.js';
import type { HistoryItem, MemberRecord } from '../api/types.js';
import { count, date } from '../format.js';
import type { Route } from '../router.js';
import { Show, useLoad, type Loaded } from '../ui/load.js';
import { Card, Empty, Stat } from '../ui/parts.js';
import { MemberActivity } from './member-activity.js';
import { SubscriptionBlock } from './member-subscription.js';
import { days, MemberBadge } from './members-labels.js';
import { listHref } from './members-query.js';

type Page = { member: MemberRecord; currencies: Map<string, string> };

/**
 * One member as GET /members/{id} has them: status and engagement, every subscription with
 * its changes, payments and refunds (cancel and refund from here, each behind a confirmation),
 * their workouts, personal records and challenges.
 */
export function Member({ route }: { route: Route }) {
  const id = route.parts[1] ?? '';
  const [notice, setNotice] = useState<string>();
  useEffect(() => setNotice(undefined), [id]);
  const record = useLoad(async () => {
    // A mistyped link: say so, rather than the API's validation message about a path parameter.
    if (!UUID.test(id)) throw new Error('This link does not name a member. Open one from the members list.');
    const member = ok(await api.GET('/api/v1/members/{id}', { params: { path: { id } } })).data;
    return { member, currencies: await tierCurrencies(member) };
  }, [id]);
  // Another member's page still on screen while this one loads would show the wrong person.
  const shown: Loaded<Page> =
    record.data?.member.id === id ? record : record.state === 'error' ? { state: 'error', error: record.error } : { state: 'loading' };

  return (
    <>
      <a class="back" href={listHref()}>
        ← All members
      </a>
      {shown.data ? null : <h1>Member</h1>}
      <Show result={shown} label="the member" saysUpdating>
        {({ member, currencies }) => (
          <>
            <div class="member-head">
              <h1 data-testid="member-name">{member.name}</h1>
              <MemberBadge status={member.status} />
            </div>
            <p class="member-sub">
              {member.email} · member since {date(member.joined_at)}
            </p>
            <section class="stats" aria-label="Engagement">
              <Stat testId="member-last-active" label="Last active" value={member.engagement.last_active_at ? date(member.engagement.last_active_at) : 'Never'} />
              <Stat testId="member-workouts-30d" label="Workouts, 30 days" value={count(member.engagement.workouts_completed_30d)} />
              <Stat testId="member-comments-30d" label="Comments, 30 days" value={count(member.engagement.posts_count_30d)} />
              <Stat testId="member-streak" label="Workout streak" value={days(member.engagement.streak_days)} />
            </section>
            <div role="status">
              {notice ? (
                <p class="notice" data-testid="member-notice">
                  {notice}
                </p>
              ) : null}
            </div>
            {shown.state === 'loading' ? (
              <p class="loading" role="status">
                Updating…
              </p>
            ) : null}
            <Card title="Subscriptions">
              {member.subscription_history.length === 0 ? (
                <Empty>No subscriptions in your communities.</Empty>
              ) : (
                // Live ones first, then the newest: what a creator acts on is on top.
                ordered(member.subscription_history).map((s) => (
                  <SubscriptionBlock
                    key={s.id}
                    member={member}
                    subscription={s}
                    currency={currencies.get(s.tier_id) ?? s.payments[s.payments.length - 1]?.currency}
                    onDone={(message) => {
                      setNotice(message);
                      record.reload();
                    }}
                  />
                ))
              )}
            </Card>
            <MemberActivity member={member} />
          </>
        )}
      </Show>
    </>
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LIVE = new Set<HistoryItem['status']>(['trialing', 'active', 'past_due']);

function ordered(history: HistoryItem[]): HistoryItem[] {
  return [...history].reverse().sort((a, b) => Number(LIVE.has(b.status)) - Number(LIVE.has(a.status)));
}

/**
 * A subscription's price carries no currency; its tier does (GET /tiers/{id}, one call per
 * tier, usually one or two). A tier that cannot be read leaves the price to the payments'.
 */
async function tierCurrencies(member: MemberRecord): Promise<Map<string, string>> {
  const ids = [...new Set(member.subscription_history.map((s) => s.tier_id))];
  const answers = await Promise.allSettled(ids.map(async (id) => ok(await api.GET('/api/v1/tiers/{id}', { params: { path: { id } } })).data));
  const currencies = new Map<string, string>();
  for (const a of answers) if (a.status === 'fulfilled') currencies.set(a.value.id, a.value.currency);
  return currencies;
}
