import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { adminAuth } from '../../http/auth.js';
import { authErrors, Int64, Ok } from '../../http/schemas.js';
import type { Reconciler } from './reconcile.service.js';

/** Operator trigger for reconciliation (the CLI's `reconcile`); it also runs on a schedule. */
export function reconcileRoutes(reconciler: Reconciler, adminToken: string): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addHook('onRequest', adminAuth(adminToken));
    app.post(
      '/reconcile',
      {
        schema: {
          tags: ['Admin'],
          security: [{ adminToken: [] }],
          summary: 'Reconcile with the processor now',
          querystring: Type.Object(
            { creator_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'Only this creator.' })) },
            { additionalProperties: false },
          ),
          description:
            'Processes due webhook events, re-reads every subscription of every connected account into the mirror, and converges the subscriptions of every community to its status (pauses applied, lifted pauses finished, creator cancels kept), and recomputes the creator metrics counters of each creator from the mirror, fixing any difference. Answers what it checked and fixed. Also runs every RECONCILE_INTERVAL_MS.',
          response: {
            200: Ok(
              Type.Object({
                creators: Int64(),
                subscriptions_checked: Int64(),
                subscriptions_fixed: Int64({ description: 'Mirror rows that differed from the processor and were corrected (or were missing).' }),
                pause_fixes: Int64({ description: 'Subscriptions brought to their community status: set to cancel at period end (paused), lifted (active), or a creator cancel set again.' }),
                accounts_updated: Int64({ description: "Creators' processor accounts whose kept state (charges, payouts, requirements, schedule) was re-read." }),
                payouts_fixed: Int64({ description: 'Payout mirror rows corrected or added.' }),
                balance_transactions_copied: Int64({ description: 'Balance transactions added to the local copy that balance answers read earnings from.' }),
                payments_added: Int64({ description: 'Paid invoices that were missing from the mirror.' }),
                refunds_added: Int64({ description: 'Refunds (made here or in the processor dashboard) that were missing from the mirror.' }),
                metrics_rows_fixed: Int64({
                  description:
                    "Creator-metrics counter rows (and the spells and member states they are computed from) that differed from a from-scratch recomputation over the mirror and were corrected; 0 when the kept counters were right.",
                }),
                events_processed: Int64(),
                errors: Int64(),
              }),
            ),
            ...authErrors,
          },
        },
      },
      async (request) => ({
        success: true as const,
        data: await reconciler.run(request.query.creator_id ? { creatorId: request.query.creator_id } : {}),
      }),
    );
  };
}
