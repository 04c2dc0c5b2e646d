import { Type, type Static } from '@sinclair/typebox';
import { API_KEY_PREFIX } from '../../http/auth.js';
import { ProcessorId, Timestamp, Uuid } from '../../http/schemas.js';

const NAME_MAX = 200;
const EMAIL_MAX = 254;

export const Creator = Type.Object(
  {
    id: Uuid,
    name: Type.String({ maxLength: NAME_MAX }),
    email: Type.String({ format: 'email', maxLength: EMAIL_MAX }),
    processor_account_id: Type.Union([ProcessorId(), Type.Null()], {
      description: "The creator's connected account at the payment processor.",
    }),
    created_at: Timestamp,
  },
  { $id: 'Creator', title: 'Creator' },
);

const apiKeyProps = {
  id: Uuid,
  creator_id: Uuid,
  // generateApiKey (src/http/auth.ts): the key's first 6 random characters after its prefix.
  prefix: Type.String({
    maxLength: API_KEY_PREFIX.length + 6,
    pattern: `^${API_KEY_PREFIX}[A-Za-z0-9]{6}$`,
    description: 'First characters of the key, to tell keys apart. The key itself is never shown again.',
  }),
  created_at: Timestamp,
  revoked_at: Type.Union([Timestamp, Type.Null()], { description: 'When the key was revoked; null while it works.' }),
};
export const ApiKey = Type.Object(apiKeyProps, { $id: 'ApiKey', title: 'ApiKey' });

export const CreateCreatorBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: NAME_MAX, pattern: '\\S', description: "The creator's display name." }),
    email: Type.String({ format: 'email', maxLength: EMAIL_MAX, description: 'Unique across creators, case-insensitively.' }),
  },
  { additionalProperties: false },
);
export type CreateCreatorBody = Static<typeof CreateCreatorBody>;

/**
 * A new secret: shown in the first answer only. A replay of the request's Idempotency-Key
 * answers everything else as it was, with null here: secrets are never stored, not even in
 * the idempotency store (keys exist only as hashes).
 */
// generateApiKey (src/http/auth.ts): the prefix and 40 base62 characters.
const NewSecret = Type.Union([Type.String({ maxLength: API_KEY_PREFIX.length + 40, pattern: `^${API_KEY_PREFIX}[A-Za-z0-9]{40}$` }), Type.Null()], {
  description:
    'The secret key, `tribes_sk_...`. Shown only in this response: store it now. Null when this answer is a replay of an `Idempotency-Key` (secrets are never stored); if the first answer was lost, create another key (`POST /api/v1/admin/creators/{id}/api-keys`) and revoke this one (`api_key_id`).',
});

export const CreatedCreator = Type.Object({
  creator: Type.Ref(Creator),
  api_key: NewSecret,
  api_key_id: Uuid,
});

export const CreatedApiKey = Type.Object({
  ...apiKeyProps,
  api_key: NewSecret,
});

export const KeyIdParams = Type.Object({ key_id: Uuid }, { additionalProperties: false });
