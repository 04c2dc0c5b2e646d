import type { FastifyInstance } from 'fastify';

/**
 * Foreground pressure on this node: the HTTP requests it is serving now. Background work
 * that can wait (outgoing events, events.feature.ts) reads it to give way to requests a
 * person or an app is waiting on. Counted from the request's start to its socket's answer
 * ending or being cut (`close` fires for both), so an aborted request never leaks a count.
 */
export function trackInFlight(app: FastifyInstance): () => number {
  let inFlight = 0;
  app.addHook('onRequest', (request, reply, done) => {
    inFlight++;
    reply.raw.once('close', () => inFlight--);
    done();
  });
  return () => inFlight;
}
