import type { FastifyPluginAsync } from 'fastify';

/**
 * Where hosted checkout and the billing portal send the member back by default
 * (CHECKOUT_SUCCESS_URL, CHECKOUT_CANCEL_URL, BILLING_PORTAL_RETURN_URL). A real deployment
 * points those at the member app; these plain pages keep `npm start` demos from ending on an error.
 */
const page = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>` +
  `<body style="font-family:sans-serif;max-width:32rem;margin:4rem auto"><h1>${title}</h1><p>${text}</p></body></html>`;

export const checkoutPages: FastifyPluginAsync = async (app) => {
  app.get('/checkout/success', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(page('Payment received', 'Your subscription is being activated. You can return to the app.')),
  );
  app.get('/checkout/canceled', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(page('Checkout canceled', 'Nothing was charged. You can return to the app.')),
  );
  app.get('/checkout/portal-return', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(page('Billing settings saved', 'Changes made in the billing portal take effect in a moment. You can return to the app.')),
  );
};
