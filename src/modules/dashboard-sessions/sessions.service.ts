import type { Db } from '../../db/client.js';
import { newId } from '../../db/ids.js';
import { inTransaction, iso, isoOrNull, type StoredAnswer } from '../../db/tx.js';
import { generateSessionToken, randomBase62, sha256 } from '../../http/auth.js';
import { notFound } from '../../http/errors.js';
import { offsetOf, paginated, type PageQuery } from '../../http/pagination.js';
import type { CreatorsRepo } from '../creators/creators.repo.js';
import { SESSION_IDLE_MS, type SessionRow, type SessionsRepo } from './sessions.repo.js';

export const LOGIN_TOKEN_PREFIX = 'tribes_login_';
export const SIGN_IN_PATH = '/dashboard/sign-in';
/** A sign-in link works once and for an hour: long enough to open from an e-mail or a terminal, short if it leaks. */
export const LOGIN_LINK_TTL_MS = 3600_000;
/** A session ends 14 days after sign-in however much it is used: a stolen cookie stops working. */
export const SESSION_TTL_MS = 14 * 86_400_000;
/** Kept for the Settings screen to tell sessions apart; a browser's is rarely longer. */
const USER_AGENT_MAX = 200;

export interface LoginLink {
  /** Null in a replayed answer: the link is a credential and is never stored. */
  url: string | null;
  expires_at: string;
}

export const presentSession = (s: SessionRow, currentId: string | undefined) => ({
  id: s.id,
  created_at: iso(s.created_at),
  last_seen_at: iso(s.last_seen_at),
  // Whichever comes first: 12 hours unused, or the absolute end.
  idle_expires_at: iso(new Date(Math.min(new Date(s.last_seen_at).getTime() + SESSION_IDLE_MS, new Date(s.expires_at).getTime()))),
  expires_at: iso(s.expires_at),
  revoked_at: isoOrNull(s.revoked_at),
  user_agent: s.user_agent,
  current: s.id === currentId,
});

/** Sign-in links (minted by a creator's key, the operator or the CLI) and the dashboard sessions they open. */
export function createSessionsService({ db, sessions, creators, publicUrl }: { db: Db; sessions: SessionsRepo; creators: CreatorsRepo; publicUrl: string }) {
  /** A new link for the creator, kept (as its digest) in the transaction of the stored answer. */
  function mint<E extends object>(creatorId: string, extra: E, answer: StoredAnswer<LoginLink & E> | undefined): Promise<LoginLink & E> {
    const token = LOGIN_TOKEN_PREFIX + randomBase62(40);
    const expiresAt = new Date(Date.now() + LOGIN_LINK_TTL_MS);
    return inTransaction(db, answer, async (trx) => {
      await sessions.insertLoginLink(creatorId, { id: newId(), token_hash: sha256(token), expires_at: expiresAt }, trx);
      return { url: `${publicUrl}${SIGN_IN_PATH}?token=${token}`, expires_at: iso(expiresAt), ...extra };
    });
  }

  return {
    mintLink: (creatorId: string, answer?: StoredAnswer<LoginLink>) => mint(creatorId, {}, answer),

    /** The operator's way in for a creator named by e-mail (case-insensitive, as creators' e-mails are unique). */
    async mintLinkByEmail(email: string, answer?: StoredAnswer<LoginLink & { creator_id: string }>) {
      const creator = await creators.findCreatorByEmail(email.trim());
      if (!creator) throw notFound('Creator with this e-mail');
      return mint(creator.id, { creator_id: creator.id }, answer);
    },

    /**
     * Spends the link and opens a session, in one transaction: a link that was used, expired
     * or never existed opens nothing (undefined). The cookie's token is returned once and kept
     * only as its digest.
     */
    async signIn(loginToken: string, userAgent: string | undefined) {
      return db.transaction().execute(async (trx) => {
        const creatorId = await sessions.consumeLoginLink(sha256(loginToken), trx);
        if (!creatorId) return undefined;
        const { token, hash } = generateSessionToken();
        const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
        await sessions.insertSession(creatorId, { id: newId(), token_hash: hash, expires_at: expiresAt, user_agent: userAgent?.slice(0, USER_AGENT_MAX) ?? null }, trx);
        return { token, maxAgeSeconds: SESSION_TTL_MS / 1000 };
      });
    },

    /** Live sessions, newest first; `current` marks the one making the request, if it is one. */
    async list(creatorId: string, currentSessionId: string | undefined, query: PageQuery) {
      const { rows, total } = await sessions.pageLiveSessions(creatorId, { limit: query.limit, offset: offsetOf(query) });
      return paginated(
        rows.map((s) => presentSession(s, currentSessionId)),
        total,
        query,
      );
    },

    /** Ends a session of the creator's; ending it again answers it with its first revocation time. */
    async revoke(creatorId: string, sessionId: string, currentSessionId: string | undefined) {
      const row = await sessions.revokeSession(creatorId, sessionId);
      if (!row) throw notFound('Dashboard session');
      return presentSession(row, currentSessionId);
    },
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;
