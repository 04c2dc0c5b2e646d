import { Type, type Static } from '@sinclair/typebox';
import { Timestamp, Uuid } from '../../http/schemas.js';

export const Creator = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    email: Type.String({ format: 'email' }),
    processor_account_id: Type.Union([Type.String(), Type.Null()], {
      description: "The creator's connected account at the payment processor.",
    }),
    created_at: Timestamp,
  },
  { $id: 'Creator', title: 'Creator' },
);

const apiKeyProps = {
  id: Uuid,
  creator_id: Uuid,
  prefix: Type.String({ description: 'First characters of the key, to tell keys apart. The key itself is never shown again.' }),
  created_at: Timestamp,
  revoked_at: Type.Union([Timestamp, Type.Null()], { description: 'When the key was revoked; null while it works.' }),
};
export const ApiKey = Type.Object(apiKeyProps, { $id: 'ApiKey', title: 'ApiKey' });

export const CreateCreatorBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: "The creator's display name." }),
    email: Type.String({ format: 'email', maxLength: 254, description: 'Unique across creators, case-insensitively.' }),
  },
  { additionalProperties: false },
);
export type CreateCreatorBody = Static<typeof CreateCreatorBody>;

/**
 * A new secret: shown in the first answer only. A replay of the request's Idempotency-Key
 * answers everything else as it was, with null here: secrets are never stored, not even in
 * the idempotency store (keys exist only as hashes).
 */
const NewSecret = Type.Union([Type.String(), Type.Null()], {
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
