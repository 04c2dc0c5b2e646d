import type { AccountRepo } from './modules/account/account.repo.js';
import type { SessionsRepo } from './modules/dashboard-sessions/sessions.repo.js';
import type { MembersRepo } from './modules/members/members.repo.js';
import type { Inbox } from './modules/webhooks/inbox.js';

/** Daily, on every node (rows another node is deleting are skipped). */
export const RETENTION_INTERVAL_MS = 24 * 3600_000;

/** Deletes what is kept only for a while: processed events past retention, expired member tokens, onboarding-link tokens, dashboard sign-in links and ended sessions. */
export async function purgeRetained(
  inbox: Inbox,
  members: Pick<MembersRepo, 'purgeExpiredTokens'>,
  retentionDays: number,
  accounts?: Pick<AccountRepo, 'purgeLinkTokens'>,
  sessions?: Pick<SessionsRepo, 'purge'>,
  outgoing?: { purge(): Promise<number> },
) {
  return {
    events: await inbox.purgeProcessed(retentionDays),
    tokens: await members.purgeExpiredTokens(),
    linkTokens: (await accounts?.purgeLinkTokens()) ?? 0,
    dashboardSessions: (await sessions?.purge()) ?? 0,
    outgoingEvents: (await outgoing?.purge()) ?? 0,
  };
}
