import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { adminAuth } from '../../http/auth.js';
import { authErrors, conflictError, Currency, errorResponse, IdParams, Int64, Ok } from '../../http/schemas.js';
import type { PayoutsService } from './payouts.service.js';

const Cents = Int64();

/** Operator view of a creator's ledger at the processor, with the money identities checked. */
export function ledgerRoutes(service: PayoutsService, adminToken: string): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addHook('onRequest', adminAuth(adminToken));
    app.get(
      '/creators/:id/ledger',
      {
        schema: {
          tags: ['Admin'],
          security: [{ adminToken: [] }],
          summary: "Verify a creator's ledger",
          description:
            "Reads the creator's charges, refunds, payouts and balance from the processor and checks that every charge is creator net + platform fee (fee = 10 % rounded half up), that refunds reversed net and fee in proportion, and that available + pending + paid out + in transit = all-time net. `ok` is false when any check fails (`npm run --silent cli -- ledger verify --creator ID` exits non-zero then).",
          params: IdParams,
          response: {
            200: Ok(
              Type.Object({
                currency: Currency,
                charges: Type.Object({ count: Int64(), gross_cents: Cents, fee_cents: Cents, net_cents: Cents }),
                refunds: Type.Object({ count: Int64(), amount_cents: Cents, fee_reversed_cents: Cents, net_reversed_cents: Cents }),
                payouts: Type.Object({ paid_cents: Cents, in_transit_cents: Cents }),
                balance: Type.Object({ available_cents: Cents, pending_cents: Cents }),
                all_time_net_cents: Cents,
                this_month_net_cents: Cents,
                // ledger.ts: a name quotes at most one processor id (255), a detail six numbers.
                checks: Type.Array(Type.Object({ name: Type.String({ maxLength: 300 }), ok: Type.Boolean(), detail: Type.String({ maxLength: 500 }) })),
                ok: Type.Boolean(),
              }),
            ),
            ...authErrors,
            404: errorResponse('No creator with this id.'),
            ...conflictError('The creator has no payment processor account.'),
            502: errorResponse('The payment processor failed; retry.'),
          },
        },
      },
      async (request) => ({ success: true as const, data: await service.ledger(request.params.id) }),
    );
  };
}
