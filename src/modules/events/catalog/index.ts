import type { EventDefinition } from './define.js';
import {
  accountUpdated,
  memberJoined,
  memberLeft,
  paymentFailed,
  paymentSucceeded,
  payoutFailed,
  payoutPaid,
  refundCreated,
  subscriptionCanceled,
  subscriptionCreated,
  subscriptionPastDue,
  subscriptionUpdated,
} from './billing.js';
import { challengeFinished, challengeJoined, commentCreated, postPublished } from './community.js';
import { endpointDisabled, ping } from './system.js';
import { prAchieved, workoutLogged } from './training.js';

/**
 * Every event type Tribes sends, in the order the OpenAPI document lists them. A type is
 * listed here only once something sends it: an endpoint may subscribe to listed types only.
 */
export const CATALOG = [
  workoutLogged,
  prAchieved,
  subscriptionCreated,
  subscriptionUpdated,
  subscriptionCanceled,
  subscriptionPastDue,
  memberJoined,
  memberLeft,
  paymentSucceeded,
  paymentFailed,
  refundCreated,
  payoutPaid,
  payoutFailed,
  accountUpdated,
  postPublished,
  commentCreated,
  challengeJoined,
  challengeFinished,
  endpointDisabled,
  ping,
] as const satisfies readonly EventDefinition[];

export type EventType = (typeof CATALOG)[number]['type'];
/** Types an endpoint may subscribe to: all but `ping`, which goes to the endpoint that asked for it. */
export const SUBSCRIBABLE_TYPES = CATALOG.map((d) => d.type).filter((t) => t !== 'ping');
export const CATALOG_VERSION = '2026-11-26';
