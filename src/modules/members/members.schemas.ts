import { Type, type Static } from '@sinclair/typebox';
import { authErrors, errorResponse, Timestamp, Uuid } from '../../http/schemas.js';
import { MEMBER_TOKEN_PREFIX } from './member-auth.js';

/** A member's name as sent at sign-up: also the bound of every answer that shows it in full. */
export const MEMBER_NAME_MAX = 120;
export const EMAIL_MAX = 254;
/** No route sets an avatar yet: whatever comes to set one keeps to this, the bound of the other URLs the API takes. */
export const AVATAR_URL_MAX = 2048;

/** Member routes authenticate with a member token (`tribes_mt_...`), never a creator key. */
export const memberSecurity = [{ memberToken: [] }];

/** Error responses every member-authenticated route can give; routes add their own on top. */
export const memberAuthErrors = {
  ...authErrors,
  401: errorResponse('Missing, malformed, expired or revoked member token; creator API keys are refused here too.'),
};

/**
 * How members see each other's names (abbreviate() in names.ts): the first name and the initial
 * of the last, which can be one character longer than the name ("A B" → "A B.").
 */
export const AbbreviatedName = Type.String({
  maxLength: MEMBER_NAME_MAX + 1,
  description: 'First name and the initial of the last ("Maria Silva" → "Maria S."); a single name stays whole.',
});

/** What a member sees of their own account. Never the password hash. */
export const Member = Type.Object(
  {
    id: Uuid,
    name: Type.String({ maxLength: MEMBER_NAME_MAX }),
    email: Type.String({ format: 'email', maxLength: EMAIL_MAX }),
    avatar_url: Type.Union([Type.String({ maxLength: AVATAR_URL_MAX }), Type.Null()]),
    created_at: Timestamp,
  },
  { $id: 'Member', title: 'Member' },
);

const Email = Type.String({ format: 'email', maxLength: EMAIL_MAX, description: 'Unique across members, case-insensitively.' });

export const SignupBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: MEMBER_NAME_MAX, pattern: '\\S', description: 'Display name, 1 to 120 characters, not blank.' }),
    email: Email,
    password: Type.String({
      minLength: 10,
      maxLength: 200,
      description: '10 to 200 characters; any characters, spaces included. Stored only as a salted scrypt hash.',
    }),
  },
  { additionalProperties: false },
);
export type SignupBody = Static<typeof SignupBody>;

export const LoginBody = Type.Object(
  {
    email: Email,
    // Only bounded here, not held to the sign-up rules: a policy change must not lock out older accounts.
    password: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { additionalProperties: false },
);
export type LoginBody = Static<typeof LoginBody>;

export const MemberSession = Type.Object({
  member: Type.Ref(Member),
  // generateMemberToken (member-auth.ts): the prefix and 40 base62 characters.
  token: Type.String({
    maxLength: MEMBER_TOKEN_PREFIX.length + 40,
    pattern: `^${MEMBER_TOKEN_PREFIX}[A-Za-z0-9]{40}$`,
    description: 'Bearer token for the member API, `tribes_mt_...`: send it as `Authorization: Bearer <token>`. Shown only in this response.',
  }),
  expires_at: Type.String({ format: 'date-time', maxLength: 64, description: 'When the token stops working (30 days after issue); log in again for a new one.' }),
});

export const LoggedOut = Type.Object({ revoked: Type.Literal(true, { description: 'The token of this request no longer works.' }) });
