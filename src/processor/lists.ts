import type Stripe from 'stripe';
import { guarded } from './errors.js';

/** Every item of a Stripe list, page by page (`starting_after` the last one seen); `what` names it in errors. */
export async function* all<T extends { id?: string }>(what: string, page: (startingAfter: string | undefined) => Promise<Stripe.ApiList<T>>): AsyncGenerator<T> {
  let startingAfter: string | undefined;
  for (;;) {
    const list = await guarded(what, () => page(startingAfter));
    yield* list.data;
    if (!list.has_more || list.data.length === 0) return;
    startingAfter = list.data[list.data.length - 1]!.id;
  }
}
