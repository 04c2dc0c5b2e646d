import { Type, type Static } from '@sinclair/typebox';
import { Currency, Int64, PaginationQuery, Uuid } from '../../http/schemas.js';
import { CATEGORIES, COMMUNITY_NAME_MAX, CoverImageUrl, Description, Slug } from '../communities/communities.schemas.js';
import { Benefits, TIER_NAME_MAX } from '../tiers/tiers.schemas.js';

const Category = Type.Union(
  CATEGORIES.map((c) => Type.Literal(c)),
  { description: 'One of: ' + CATEGORIES.join(', ') + '.' },
);

/**
 * A tier as a prospective member sees it: what it costs and gives. No processor ids, no
 * subscriber counts.
 */
const PublicTier = Type.Object({
  id: Uuid,
  name: Type.String({ maxLength: TIER_NAME_MAX }),
  price_cents: Int64({ description: 'Price per billing period, in cents.' }),
  currency: Currency,
  billing_period: Type.Union([Type.Literal('monthly'), Type.Literal('quarterly'), Type.Literal('yearly')]),
  trial_days: Int64({ description: 'Free days before the first charge.' }),
  benefits: Benefits,
  level: Type.Union([Int64(), Type.Null()], { description: "The creator's explicit rank for the tier, if any (see the tier order)." }),
});

/** A community as the public sees it: a presenter-made shape, never the creator's row or figures. */
export const DiscoverCommunity = Type.Object(
  {
    id: Uuid,
    name: Type.String({ maxLength: COMMUNITY_NAME_MAX }),
    slug: Slug,
    description: Type.Union([Description, Type.Null()]),
    category: Category,
    cover_image_url: Type.Union([CoverImageUrl, Type.Null()]),
    accepting_members: Type.Boolean({
      description:
        'False while the creator has not finished setting up payments at the processor: the community is listed, its tiers can be shown, but a checkout answers 409 `payments_not_enabled` until it opens.',
    }),
    tiers: Type.Array(PublicTier, {
      description:
        'Active tiers, lowest first in the tier order: by explicit `level` when the creator set any, else by monthly-normalised price, then age.',
    }),
  },
  { $id: 'DiscoverCommunity', title: 'DiscoverCommunity' },
);

export const DiscoverQuery = Type.Object(
  {
    ...PaginationQuery,
    category: Type.Optional(Category),
    q: Type.Optional(Type.String({ maxLength: 100, description: 'Text to find in the name or description (a substring, any case); up to 100 characters.' })),
  },
  { additionalProperties: false },
);
export type DiscoverQuery = Static<typeof DiscoverQuery>;
