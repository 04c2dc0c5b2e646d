import type { Schemas } from '../api/types.js';
import { dateTime } from '../format.js';
import { Badge } from '../ui/parts.js';

export type Endpoint = Schemas['WebhookEndpoint'];
export type Delivery = Schemas['WebhookDelivery'];
export type DeliveryStatus = Delivery['status'];

/** The delivery states in the API's order, with how they read. */
export const DELIVERY_STATUS: Record<DeliveryStatus, { label: string; tone: 'neutral' | 'good' | 'warn' | 'bad' }> = {
  pending: { label: 'Pending', tone: 'warn' },
  succeeded: { label: 'Succeeded', tone: 'good' },
  dead: { label: 'Failed', tone: 'bad' },
};
export const DELIVERY_STATUSES = Object.keys(DELIVERY_STATUS) as DeliveryStatus[];
export const isDeliveryStatus = (s: string | null): s is DeliveryStatus => s !== null && s in DELIVERY_STATUS;

/** How often a delivery log or a delivery refreshes itself: soon while a retry is due, else now and then. */
export const refreshMsFor = (shown: Array<{ status: DeliveryStatus }>): number => (shown.some((d) => d.status === 'pending') ? 5_000 : 30_000);

export const DeliveryBadge = ({ status }: { status: DeliveryStatus }) => <Badge tone={DELIVERY_STATUS[status].tone}>{DELIVERY_STATUS[status].label}</Badge>;

/** Why an endpoint is off, in words: who or what turned it off. */
export function disabledReason(e: Endpoint): string {
  switch (e.disabled_reason) {
    case 'creator':
      return 'You turned it off.';
    case 'gone':
      return 'Turned off by Tribes: the endpoint answered 410 Gone, which asks for no more deliveries.';
    case 'failing':
      return 'Turned off by Tribes: no delivery succeeded for 5 days.';
    default:
      return '';
  }
}

/** Enabled or disabled, with the reason in plain words next to it. */
export function EndpointState({ endpoint: e }: { endpoint: Endpoint }) {
  if (e.enabled) return <Badge tone={e.failing_since ? 'warn' : 'good'}>{e.failing_since ? 'Enabled, failing' : 'Enabled'}</Badge>;
  return (
    <span class="endpoint-state">
      <Badge tone="bad">Disabled</Badge> <span class="reason">{disabledReason(e)}</span>
    </span>
  );
}

export const eventsText = (events: string[]): string => (events.includes('*') ? 'Every event type' : events.join(', '));

export const failingText = (e: Endpoint): string => (e.failing_since ? `Failing since ${dateTime(e.failing_since)}` : 'No failures');
