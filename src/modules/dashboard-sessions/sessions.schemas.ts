import { Type } from '@sinclair/typebox';
import { PaginationQuery, Timestamp, Uuid } from '../../http/schemas.js';

const EMAIL_MAX = 254;
/** An ISO 8601 UTC timestamp with what it means. */
const at = (description: string) => Type.String({ format: 'date-time', maxLength: 64, description });

const LINK_PATTERN = '^https?://[^\\s]+/dashboard/sign-in\\?token=tribes_login_[A-Za-z0-9]{40}$';

const loginLinkProps = {
  url: Type.Union([Type.String({ format: 'uri', maxLength: 2048, pattern: LINK_PATTERN }), Type.Null()], {
    description:
      'The sign-in link: open it in a browser to be signed in to the dashboard. It works once and for an hour, and is a credential: do not share it. Null in a replayed answer (an Idempotency-Key retry): links are never stored, ask for a new one.',
  }),
  expires_at: at('When the link stops working, an hour after it was made.'),
};

export const LoginLink = Type.Object(loginLinkProps);
export const AdminLoginLink = Type.Object({ ...loginLinkProps, creator_id: Uuid });

export const AdminLoginLinkBody = Type.Object(
  { email: Type.String({ format: 'email', maxLength: EMAIL_MAX, description: "The creator's e-mail, matched case-insensitively." }) },
  { additionalProperties: false },
);

export const DashboardSession = Type.Object(
  {
    id: Uuid,
    created_at: at('When the sign-in link was opened.'),
    last_seen_at: at('When a request last used the session, to the minute.'),
    idle_expires_at: at('When the session ends unless used again: 12 hours after last_seen_at (or expires_at, if sooner).'),
    expires_at: at('When the session ends however much it is used: 14 days after sign-in.'),
    revoked_at: Type.Union([Timestamp, Type.Null()], { description: 'When the session was signed out; null while it works.' }),
    user_agent: Type.Union([Type.String({ maxLength: 200 }), Type.Null()], {
      description: 'The browser that opened the sign-in link, as it named itself (its first 200 characters), to tell sessions apart.',
    }),
    current: Type.Boolean({ description: 'True for the session making this request.' }),
  },
  { $id: 'DashboardSession', title: 'DashboardSession' },
);

export const ListSessionsQuery = Type.Object({ ...PaginationQuery }, { additionalProperties: false });
