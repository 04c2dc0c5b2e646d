import { Type, type Static } from '@sinclair/typebox';
import { Int64, PaginationQuery, Timestamp, Uuid } from '../../http/schemas.js';

export const CATEGORIES = ['musculacao', 'funcional', 'yoga', 'crossfit', 'corrida', 'nutricao', 'outros'] as const;

const Category = Type.Union(
  CATEGORIES.map((c) => Type.Literal(c)),
  { description: 'One of: ' + CATEGORIES.join(', ') + '.' },
);
/** A community's name: also the bound of every answer that names a community. */
export const COMMUNITY_NAME_MAX = 120;
const Name = Type.String({ minLength: 1, maxLength: COMMUNITY_NAME_MAX, pattern: '\\S', description: 'Public name, 1 to 120 characters.' });
export const Slug = Type.String({
  pattern: '^[a-z0-9-]{3,63}$',
  maxLength: 63,
  description: 'URL key: 3 to 63 characters of a-z, 0-9 and `-`. Unique across all of Tribes and immutable once created.',
  examples: ['forca-total'],
});
export const Description = Type.String({ maxLength: 2000, description: 'Short description, up to 2,000 characters.' });
export const CoverImageUrl = Type.String({
  format: 'uri',
  pattern: '^https?://',
  maxLength: 2048,
  description: 'http(s) URL of the cover image.',
});

export const Community = Type.Object(
  {
    id: Uuid,
    // What the server stores is what the create and update bodies allowed (the slug's form is also a database check).
    name: Type.String({ maxLength: COMMUNITY_NAME_MAX }),
    slug: Slug,
    description: Type.Union([Description, Type.Null()]),
    category: Category,
    is_public: Type.Boolean({ description: 'Whether the community appears in public discovery.' }),
    cover_image_url: Type.Union([CoverImageUrl, Type.Null()]),
    status: Type.Union([Type.Literal('active'), Type.Literal('paused')], {
      description: '`paused` after DELETE: hidden from discovery, no new subscriptions. `POST /communities/{id}/resume` reactivates it.',
    }),
    members_count: Int64({ description: 'Distinct members holding a live (trialing, active or past_due) subscription here; `incomplete`, `unpaid` and `paused` ones give no access and do not count.' }),
    active_subscribers: Int64({ description: 'Subscriptions in status `active` (including those set to cancel at period end).' }),
    mrr_cents: Int64({
      description: 'Monthly recurring revenue: each active or past_due subscription at its billed price, normalised to a month (quarterly / 3, yearly / 12) and rounded half up, summed. Trials are not MRR, nor are `incomplete`, `unpaid` or `paused` subscriptions.',
    }),
    paused_at: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Community', title: 'Community' },
);

export const CreateCommunityBody = Type.Object(
  {
    name: Name,
    slug: Slug,
    category: Category,
    description: Type.Optional(Description),
    is_public: Type.Optional(Type.Boolean({ default: true, description: 'Default true.' })),
    cover_image_url: Type.Optional(CoverImageUrl),
  },
  { additionalProperties: false },
);
export type CreateCommunityBody = Static<typeof CreateCommunityBody>;

export const UpdateCommunityBody = Type.Object(
  {
    name: Type.Optional(Name),
    category: Type.Optional(Category),
    description: Type.Optional(Type.Union([Description, Type.Null()], { description: 'null clears it.' })),
    is_public: Type.Optional(Type.Boolean()),
    cover_image_url: Type.Optional(Type.Union([CoverImageUrl, Type.Null()], { description: 'null clears it.' })),
  },
  { additionalProperties: false, description: 'Only the fields sent change. `slug` is immutable: sending it is 400.' },
);
export type UpdateCommunityBody = Static<typeof UpdateCommunityBody>;

export const ListCommunitiesQuery = Type.Object(
  {
    ...PaginationQuery,
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('paused')], { description: 'Only communities in this status.' })),
  },
  { additionalProperties: false },
);
export type ListCommunitiesQuery = Static<typeof ListCommunitiesQuery>;
