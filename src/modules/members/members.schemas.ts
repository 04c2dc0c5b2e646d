import { Type, type Static } from '@sinclair/typebox';
import { authErrors, errorResponse, Timestamp, Uuid } from '../../http/schemas.js';

/** Member routes authenticate with a member token (`tribes_mt_...`), never a creator key. */
export const memberSecurity = [{ memberToken: [] }];

/** Error responses every member-authenticated route can give; routes add their own on top. */
export const memberAuthErrors = {
  ...authErrors,
  401: errorResponse('Missing, malformed, expired or revoked member token; creator API keys are refused here too.'),
};

/** What a member sees of their own account. Never the password hash. */
export const Member = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    email: Type.String({ format: 'email' }),
    avatar_url: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
  },
  { $id: 'Member', title: 'Member' },
);

const Email = Type.String({ format: 'email', maxLength: 254, description: 'Unique across members, case-insensitively.' });

export const SignupBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 120, pattern: '\\S', description: 'Display name, 1 to 120 characters, not blank.' }),
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
  token: Type.String({
    description: 'Bearer token for the member API, `tribes_mt_...`: send it as `Authorization: Bearer <token>`. Shown only in this response.',
  }),
  expires_at: Type.String({ format: 'date-time', maxLength: 64, description: 'When the token stops working (30 days after issue); log in again for a new one.' }),
});

export const LoggedOut = Type.Object({ revoked: Type.Literal(true, { description: 'The token of this request no longer works.' }) });
