import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponse, OkList } from '../../http/schemas.js';
import { DiscoverCommunity, DiscoverQuery } from './discover.schemas.js';
import type { DiscoverService } from './discover.service.js';

const tags = ['Discovery'];

/** Public discovery: what anyone (a prospective member, the app's storefront) may see, without a token. */
export function discoverRoutes(service: DiscoverService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/communities',
      {
        schema: {
          tags,
          security: [],
          summary: 'Discover communities',
          description:
            "Public, no authentication. Active, public communities of every creator, newest first (ties by id), each with its active tiers in the tier order (lowest first). Paused or private communities and inactive tiers never appear, nor any creator figure or processor id. Filter by `category` and by `q` (a substring of the name or description, any case). Paginated with `page` and `limit`.",
          querystring: DiscoverQuery,
          response: {
            200: OkList(Type.Ref(DiscoverCommunity)),
            400: errorResponse('The query failed validation (unknown category, `q` over 100 characters, bad page or limit).'),
            429: errorResponse('Rate limited; wait `Retry-After` seconds.'),
            503: errorResponse('The database is unavailable; retry later.'),
          },
        },
      },
      async (request) => service.list(request.query),
    );
  };
}
