import { Type, type Static } from '@sinclair/typebox';
import { API_KEY_PREFIX } from '../../http/auth.js';
import { PaginationQuery, Timestamp, Uuid } from '../../http/schemas.js';

export const API_KEY_NAME_MAX = 100;

export const Scope = Type.Union([Type.Literal('full'), Type.Literal('read')], {
  description: '`full`: every operation. `read`: GET requests only; every other request is 403 `insufficient_scope`.',
});

/** A key as every answer shows it (the operator's view adds its creator): never the secret, never its hash. */
export const apiKeyProps = {
  id: Uuid,
  name: Type.Union([Type.String({ maxLength: API_KEY_NAME_MAX }), Type.Null()], {
    description: 'What the key is for, as its creator named it. Null for keys issued without a name (by the operator, or before keys had names).',
  }),
  // generateApiKey (src/http/auth.ts): the key's first 6 random characters after its prefix.
  prefix: Type.String({
    maxLength: API_KEY_PREFIX.length + 6,
    pattern: `^${API_KEY_PREFIX}[A-Za-z0-9]{6}$`,
    description: 'First characters of the key, to tell keys apart. The key itself is never shown again.',
  }),
  scope: Scope,
  created_at: Timestamp,
  last_used_at: Type.Union([Timestamp, Type.Null()], {
    description: 'When a request last authenticated with the key, to the minute (recorded at most once a minute per key). Null if never used.',
  }),
  revoked_at: Type.Union([Timestamp, Type.Null()], { description: 'When the key was revoked; null while it works.' }),
};

export const CreatorApiKey = Type.Object(apiKeyProps, { $id: 'CreatorApiKey', title: 'CreatorApiKey' });

/**
 * A new secret: shown in the first answer only. A replay of the request's Idempotency-Key
 * answers everything else as it was, with null here: secrets are never stored, not even in
 * the idempotency store (keys exist only as hashes). `lost` says what to do if the first
 * answer never arrived.
 */
// generateApiKey (src/http/auth.ts): the prefix and 40 base62 characters.
export const newSecret = (lost: string) =>
  Type.Union([Type.String({ maxLength: API_KEY_PREFIX.length + 40, pattern: `^${API_KEY_PREFIX}[A-Za-z0-9]{40}$` }), Type.Null()], {
    description: `The secret key, \`tribes_sk_...\`. Shown only in this response: store it now. Null when this answer is a replay of an \`Idempotency-Key\` (secrets are never stored); if the first answer was lost, ${lost}`,
  });

export const CreatedCreatorApiKey = Type.Object({
  ...apiKeyProps,
  api_key: newSecret('create another key and revoke this one (`DELETE /api/v1/api-keys/{id}`).'),
});

export const KeyName = Type.String({
  minLength: 1,
  maxLength: API_KEY_NAME_MAX,
  pattern: '\\S',
  description: `What the key is for ("Zapier", "dashboard read-only"): 1 to ${API_KEY_NAME_MAX} characters, trimmed.`,
});

export const CreateApiKeyBody = Type.Object(
  { name: KeyName, scope: Scope },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

export const ListApiKeysQuery = Type.Object({ ...PaginationQuery }, { additionalProperties: false });
export type ListApiKeysQuery = Static<typeof ListApiKeysQuery>;
