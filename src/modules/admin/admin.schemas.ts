import { Type, type Static } from '@sinclair/typebox';
import { ProcessorId, Timestamp, Uuid } from '../../http/schemas.js';
import { apiKeyProps, KeyName, newSecret, Scope } from '../api-keys/api-keys.schemas.js';

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

export const ApiKey = Type.Object({ ...apiKeyProps, creator_id: Uuid }, { $id: 'ApiKey', title: 'ApiKey' });

export const CreateCreatorBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: NAME_MAX, pattern: '\\S', description: "The creator's display name." }),
    email: Type.String({ format: 'email', maxLength: EMAIL_MAX, description: 'Unique across creators, case-insensitively.' }),
  },
  { additionalProperties: false },
);
export type CreateCreatorBody = Static<typeof CreateCreatorBody>;

const NewSecret = newSecret('create another key (`POST /api/v1/admin/creators/{id}/api-keys`) and revoke this one (`api_key_id`).');

export const CreatedCreator = Type.Object({
  creator: Type.Ref(Creator),
  api_key: NewSecret,
  api_key_id: Uuid,
});

export const CreatedApiKey = Type.Object({
  ...apiKeyProps,
  creator_id: Uuid,
  api_key: NewSecret,
});

/** Optional: a key the operator issues is unnamed and `full` unless told otherwise. */
export const CreateAdminApiKeyBody = Type.Object({ name: Type.Optional(KeyName), scope: Type.Optional(Scope) }, { additionalProperties: false });
export type CreateAdminApiKeyBody = Static<typeof CreateAdminApiKeyBody>;

export const KeyIdParams = Type.Object({ key_id: Uuid }, { additionalProperties: false });
