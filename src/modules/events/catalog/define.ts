import { Type, type Static, type TObject } from '@sinclair/typebox';

/**
 * One event type of the catalog: its name (`noun.verb`, as Stripe and Standard Webhooks name
 * them), what it means and when it is sent, and the JSON Schema of its `data`, published in
 * the OpenAPI document's `webhooks` section (src/http/openapi.ts).
 */
export interface EventDefinition<T extends string = string, S extends TObject = TObject> {
  type: T;
  description: string;
  data: S;
}

export const defineEvent = <T extends string, S extends TObject>(type: T, description: string, data: S): EventDefinition<T, S> => ({
  type,
  description,
  data,
});

/** `data` as a schema of its own: closed, every field described. */
export const EventData = <P extends Parameters<typeof Type.Object>[0]>(title: string, properties: P) =>
  Type.Object(properties, { title, additionalProperties: false });

export type DataOf<D extends EventDefinition> = Static<D['data']>;
