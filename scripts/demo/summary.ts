import { memberClient, type Member, type World } from './story.js';

export interface DemoFacts {
  persona: { name: string; brand: string };
  email: string;
  creatorId: string;
  apiKey: string;
  account: string;
  members: Member[];
  challengeId: string;
  training: { logs: number; prs: number };
  engagement: { posts: number; kudos: number; comments: number; votes: number };
  payouts: { failed: string; manual: number };
  seed: number;
  seconds: number;
}

const money = (cents: number) => `R$ ${(cents / 100).toLocaleString('pt-BR', { minimumFractionDigits: 2 })}`;

/** The server's resident memory, from its Prometheus scrape (prom-client's process metrics). */
async function serverRss(apiBase: string): Promise<number | null> {
  const text = await (await fetch(`${apiBase}/metrics`)).text();
  const line = /^process_resident_memory_bytes (\d+(?:\.\d+)?(?:e\+\d+)?)$/m.exec(text);
  return line ? Math.round(Number(line[1]) / 1024 / 1024) : null;
}

/** What the creator looks like through the API now, with what a newcomer needs to explore it. */
export async function summarize(w: World, f: DemoFacts) {
  const c = w.creator;
  const memberStatuses: Record<string, number> = {};
  for (const status of ['active', 'trial', 'at_risk', 'churned']) {
    memberStatuses[status] = (await c.raw('GET', `/api/v1/members?status=${status}&limit=1`)).pagination.total;
  }
  const subs = (await c.raw('GET', '/api/v1/subscriptions?limit=100')).data as Array<{ status: string; cancel_at_period_end: boolean }>;
  const subscriptionStatuses: Record<string, number> = { cancel_at_period_end: subs.filter((s) => s.cancel_at_period_end && s.status !== 'canceled').length };
  for (const s of subs) subscriptionStatuses[s.status] = (subscriptionStatuses[s.status] ?? 0) + 1;
  const metrics = await c.get('/api/v1/creator-metrics');
  const balance = await c.get('/api/v1/payouts/balance');
  const ledger = await w.admin.get(`/api/v1/admin/creators/${f.creatorId}/ledger`);
  const board = await c.get<{ rankings: Array<{ rank: number; name: string; score: number; delta: string }> }>(`/api/v1/challenges/${f.challengeId}/leaderboard?limit=10`);
  // The member to log in as: on the cheapest tier of the main community, so the Elite posts show locked.
  const guide = f.members.find((m) => m.cast.tier === 'essencial' && m.cast.fate.kind === 'stays' && m.cast.trains) ?? f.members[0]!;
  const feed = await memberClient(w, guide).get<Array<{ locked: boolean }>>('/api/v1/member/feed?limit=20');
  const rssMb = await serverRss(w.apiBase);
  // Minted last, so it has its whole hour when the summary is read.
  const signIn = await w.admin.post<{ url: string }>('/api/v1/admin/login-links', { email: f.email });

  const base = w.apiBase;
  const key = `-H "Authorization: Bearer ${f.apiKey}"`;
  const curls = [
    `curl -s ${base}/api/v1/creator-metrics ${key}`,
    `curl -s "${base}/api/v1/members?status=at_risk" ${key}`,
    `curl -s ${base}/api/v1/challenges/${f.challengeId}/leaderboard ${key}`,
    `curl -s ${base}/api/v1/payouts/balance ${key}`,
    `curl -s ${base}/api/v1/member/feed -H "Authorization: Bearer ${guide.token}"`,
  ];
  const text = [
    '',
    `Demo creator ready in ${f.seconds.toFixed(1)} s: ${f.persona.brand} <${f.email}>`,
    `  members: ${Object.entries(memberStatuses).map(([k, v]) => `${v} ${k}`).join(', ')}`,
    `  subscriptions: ${Object.entries(subscriptionStatuses).map(([k, v]) => `${v} ${k}`).join(', ')}`,
    `  MRR ${money(metrics.mrr_cents)}; balance ${money(balance.available_cents)} available, ${money(balance.pending_cents)} pending, ${money(balance.all_time_cents)} all time (ledger check: ${ledger.ok ? 'ok' : 'FAILED'})`,
    `  ${f.training.logs} workouts logged, ${f.training.prs} PRs; ${f.engagement.posts} posts, ${f.engagement.kudos} kudos, ${f.engagement.comments} comments, ${f.engagement.votes} poll votes`,
    `  leaderboard: ${board.rankings.slice(0, 5).map((r) => `${r.rank}. ${r.name} ${r.score} (${r.delta})`).join('  ')}`,
    '    (deltas compare with the ranks at the end of the previous UTC day: everyone joined today, so they move from tomorrow)',
    `  server memory: ${rssMb ?? '?'} MB resident`,
    '',
    `Creator API key:  ${f.apiKey}`,
    `Dashboard:        ${signIn.url}`,
    `                  (works once, for an hour; for another: npm run --silent cli -- creators login-link --email ${f.email})`,
    `Member login:     ${guide.cast.email} / ${guide.password}   (docs: ${base}/docs)`,
    '',
    'Try:',
    ...curls.map((l) => `  ${l}`),
    '',
  ].join('\n');
  return {
    text,
    seconds: f.seconds,
    seed: f.seed,
    api_url: base,
    creator: { id: f.creatorId, name: f.persona.brand, email: f.email, processor_account_id: f.account },
    api_key: f.apiKey,
    dashboard_sign_in_url: signIn.url,
    member_login: { email: guide.cast.email, password: guide.password, token: guide.token },
    challenge_id: f.challengeId,
    member_statuses: memberStatuses,
    subscription_statuses: subscriptionStatuses,
    mrr_cents: metrics.mrr_cents as number,
    balance,
    ledger_ok: ledger.ok as boolean,
    ledger_all_time_net_cents: ledger.all_time_net_cents as number,
    refunds: ledger.refunds.count as number,
    leaderboard: board.rankings,
    guide_sees_locked_post: feed.some((p) => p.locked),
    payouts: f.payouts,
    workouts: f.training,
    engagement: f.engagement,
    server_rss_mb: rssMb,
    curls,
  };
}

export type Summary = Awaited<ReturnType<typeof summarize>>;

/** What must hold of every demo creator (CI runs the demo and fails on any of these). */
export function sanityCheck(s: Summary): string[] {
  const problems: string[] = [];
  for (const status of ['active', 'trial', 'at_risk', 'churned']) if (!s.member_statuses[status]) problems.push(`no ${status} member`);
  for (const status of ['trialing', 'active', 'past_due', 'canceled', 'cancel_at_period_end']) if (!s.subscription_statuses[status]) problems.push(`no ${status} subscription`);
  if (!(s.mrr_cents > 0)) problems.push('MRR is not above zero');
  // Not checked: a leaderboard delta other than +0. `delta` is the change since the end of the
  // previous UTC day, and a participant who joined since then is new (+0, DESIGN §7); members
  // join on the service's wall clock (DESIGN §6), so on the day of the demo every delta is +0.
  if (s.leaderboard.length < 3 || !s.leaderboard.some((r) => r.score > 0)) problems.push('the challenge has fewer than three participants or no score');
  if (!s.guide_sees_locked_post) problems.push('the Essencial member sees no locked post');
  if (!s.ledger_ok) problems.push('the ledger check failed');
  if (s.balance.all_time_cents !== s.ledger_all_time_net_cents) problems.push(`balance all-time ${s.balance.all_time_cents} differs from the ledger's ${s.ledger_all_time_net_cents}`);
  if (s.refunds < 1) problems.push('no refund');
  if (s.workouts.prs < 1) problems.push('no personal record');
  return problems;
}
