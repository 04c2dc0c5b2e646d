import type { components, paths } from './openapi.js';

/** The API's named schemas, as the dashboard uses them. */
export type Schemas = components['schemas'];
export type CreatorMetrics = Schemas['CreatorMetrics'];
export type MetricsHistory = Schemas['MetricsHistory'];
export type HistoryDay = MetricsHistory['days'][number];
export type MemberRecord = Schemas['MemberRecord'];
/** One subscription on a member's page, with its payments, refunds and changes. */
export type HistoryItem = MemberRecord['subscription_history'][number];

type DataIn<R> = R extends { content: { 'application/json': { data: infer D } } } ? D : never;
type Answer<Op> = Op extends { responses: infer R } ? (200 extends keyof R ? DataIn<R[200]> : 201 extends keyof R ? DataIn<R[201]> : never) : never;

/** The `data` of an operation's success answer, for shapes the document does not name: DataOf<'/api/v1/account', 'get'>. */
export type DataOf<P extends keyof paths, M extends keyof paths[P]> = Answer<paths[P][M]>;
