import type { Db } from '../../db/client.js';
import { uniqueViolation } from '../../db/errors.js';
import { newId } from '../../db/ids.js';
import { iso, type Executor } from '../../db/tx.js';
import { sha256, unauthorized } from '../../http/auth.js';
import { AppError, notFound } from '../../http/errors.js';
import { generateMemberToken } from './member-auth.js';
import type { MemberRow, MembersRepo } from './members.repo.js';
import type { LoginBody, SignupBody } from './members.schemas.js';
import { hashPassword, verifyAgainstDummy, verifyPassword } from './password.js';

export const DEFAULT_MEMBER_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;

export const presentMember = (m: MemberRow) => ({
  id: m.id,
  name: m.name,
  email: m.email,
  avatar_url: m.avatar_url,
  created_at: iso(m.created_at),
});

export interface MembersDeps {
  db: Db;
  members: MembersRepo;
  /** How long a member token works; 30 days unless a test needs a short one. */
  tokenTtlMs?: number;
}

const emailTaken = () =>
  new AppError('email_taken', 'An account with this e-mail already exists; log in instead.', [{ field: 'email', message: 'is already taken' }]);

// One answer for an unknown e-mail and a wrong password, so the API never says which e-mails have accounts.
const invalidCredentials = () => unauthorized('Email or password is incorrect.');

export function createMembersService({ db, members, tokenTtlMs = DEFAULT_MEMBER_TOKEN_TTL_MS }: MembersDeps) {
  async function issueToken(memberId: string, trx: Executor = db) {
    const { token, hash } = generateMemberToken();
    const { expires_at } = await members.insertToken({ id: newId(), member_id: memberId, token_hash: hash }, tokenTtlMs, trx);
    return { token, expires_at: iso(expires_at) };
  }

  return {
    issueToken,

    /** A new account and its first token, written together. */
    async signup(input: SignupBody) {
      const email = input.email.trim();
      // Checked before hashing so a taken e-mail does not cost a scrypt; the unique index decides races.
      if (await members.findByEmailWithHash(email)) throw emailTaken();
      const passwordHash = await hashPassword(input.password);
      try {
        return await db.transaction().execute(async (trx) => {
          const member = await members.insert({ id: newId(), name: input.name.trim(), email, password_hash: passwordHash }, trx);
          return { member: presentMember(member), ...(await issueToken(member.id, trx)) };
        });
      } catch (err) {
        if (uniqueViolation(err) === 'members_email_key') throw emailTaken();
        throw err;
      }
    },

    /**
     * A new token for the right e-mail and password. An unknown e-mail (or an account
     * without a password) still pays for one scrypt, so timing tells nothing either.
     */
    async login(input: LoginBody) {
      const row = await members.findByEmailWithHash(input.email.trim());
      const ok = row?.password_hash ? await verifyPassword(input.password, row.password_hash) : await verifyAgainstDummy(input.password);
      if (!row || !ok) throw invalidCredentials();
      const { password_hash: _hash, ...member } = row;
      return { member: presentMember(member), ...(await issueToken(member.id)) };
    },

    /** Revokes the token the request came with; other sessions of the member keep working. */
    async logout(memberId: string, token: string) {
      await members.revokeToken(memberId, sha256(token));
      return { revoked: true as const };
    },

    async me(memberId: string) {
      const member = await members.findById(memberId);
      if (!member) throw notFound('Member');
      return presentMember(member);
    },
  };
}

export type MembersService = ReturnType<typeof createMembersService>;
