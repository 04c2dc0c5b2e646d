import type { Schemas } from '../api/types.js';
import { count } from '../format.js';
import { Badge } from '../ui/parts.js';
import type { MemberStatus } from './members-query.js';

export type SubscriptionStatus = Schemas['Subscription']['status'];
type Tone = 'neutral' | 'good' | 'warn' | 'bad';

/** The processor's subscription states in a creator's words, with the tone of their badge. */
const SUBSCRIPTION: Record<SubscriptionStatus, [string, Tone]> = {
  trialing: ['Trial', 'neutral'],
  active: ['Active', 'good'],
  past_due: ['Payment failing', 'warn'],
  canceled: ['Canceled', 'bad'],
  incomplete: ['First payment pending', 'warn'],
  incomplete_expired: ['Never paid', 'bad'],
  unpaid: ['Unpaid', 'bad'],
  paused: ['Paused', 'neutral'],
};

const MEMBER: Record<MemberStatus, [string, Tone]> = {
  active: ['Active', 'good'],
  trial: ['On trial', 'neutral'],
  at_risk: ['At risk', 'warn'],
  churned: ['Churned', 'bad'],
};

export const SubscriptionBadge = ({ status }: { status: SubscriptionStatus }) => <Badge tone={SUBSCRIPTION[status][1]}>{SUBSCRIPTION[status][0]}</Badge>;
export const subscriptionLabel = (status: SubscriptionStatus) => SUBSCRIPTION[status][0];

export const MemberBadge = ({ status }: { status: MemberStatus }) => <Badge tone={MEMBER[status][1]}>{MEMBER[status][0]}</Badge>;

/** "1 day", "12 days". */
export const days = (n: number) => `${count(n)} ${n === 1 ? 'day' : 'days'}`;

export const PERIOD: Record<Schemas['Subscription']['billing_period'], string> = { monthly: 'month', quarterly: 'quarter', yearly: 'year' };
