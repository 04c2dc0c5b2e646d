import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { creatorOf } from '../../http/auth.js';
import { authErrors, IdParams, notFoundError, Ok, OkList, PaginationQuery } from '../../http/schemas.js';
import type { DirectoryService } from './directory.service.js';
import type { ExportLimits, MembersExportService } from './export.service.js';
import { CsvExportStream } from './export.stream.js';
import { ExecutedWorkout, ExportMembersQuery, ListMembersQuery, MemberListItem, MemberRecord, MembersPagination } from './memberships.schemas.js';
import type { RecordService } from './record.service.js';

const tags = ['Members'];

/** What GET /members/export.csv promises, with the server's own limits. */
const EXPORT_DESCRIPTION = (l: ExportLimits) =>
  [
    'The members matching the same filters and order as the list, every page of them, as CSV (RFC 4180: comma-separated, CRLF line ends, fields quoted when they hold a comma, quote or line break; UTF-8, no byte-order mark; a header row first).',
    'Columns: `id, name, email, avatar_url, status, joined_at, last_active_at, workouts_completed_30d, posts_count_30d, streak_days, tiers` (`tiers`: "Tier name: subscription status" per community, separated by "; "). A cell a spreadsheet could run as a formula (starting with `=`, `+`, `-`, `@`, tab or carriage return) is prefixed with `\'`.',
    `Streamed in batches of ${l.batchSize} members, read by keyset in the list's order; the next batch is read only when the client has taken the previous one, so memory stays constant at any size.`,
    'Consistency: on PostgreSQL every batch is read from one snapshot taken at the start, so each member matching then appears exactly once, as they were then.',
    'On the embedded database, whose single connection an export never holds while the client reads, the members matching at the start and their order are fixed then (each appears exactly once, in that order), and the fields of each row are as they were when its batch was read.',
    `At most ${l.perCreator} export per creator and ${l.perNode} per server run at once (429 with \`Retry-After\` and a message saying which limit beyond).`,
    `A client that takes nothing for ${l.idleTimeoutMs / 1000} s is cut off (the connection is closed), and a client that closes or resets the connection at any moment ends the export; either way its slot, snapshot and database connection are freed at once.`,
    'An error after the first batch was sent ends the response early (the last line is then incomplete), since the status is already sent.',
  ].join(' ');

export function membershipsRoutes(directory: DirectoryService, records: RecordService, exports: MembersExportService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/members/:id',
      {
        config: { reads: 'replica' },
        schema: {
          tags,
          summary: 'Get a member',
          description:
            "The member as in the list, plus their status and first join, the complete subscription history in this creator's communities (each subscription with its recorded changes, payments and refunds), the 20 most recent executed workouts (and the path to page further), personal records and challenge participation. Someone who never subscribed to this creator is 404, whoever else they belong to.",
          params: IdParams,
          response: { 200: Ok(Type.Ref(MemberRecord)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => ({ success: true as const, data: await records.get(creatorOf(request), request.params.id) }),
    );

    app.get(
      '/members/:id/workout-logs',
      {
        config: { reads: 'replica' },
        schema: {
          tags,
          summary: "List a member's executed workouts",
          description: "Workouts the member logged in this creator's communities, newest first (performed_at, ties by id). Personal logs and logs in other creators' communities never show.",
          params: IdParams,
          querystring: Type.Object(PaginationQuery, { additionalProperties: false }),
          response: { 200: OkList(Type.Ref(ExecutedWorkout)), ...authErrors, ...notFoundError },
        },
      },
      async (request) => records.workoutLogs(creatorOf(request), request.params.id, request.query),
    );

    app.get(
      '/members',
      {
        config: { reads: 'replica' },
        schema: {
          tags,
          summary: 'List members',
          description:
            "Everyone who ever subscribed (any status) to one of the creator's communities, with their subscriptions and engagement in this creator's communities only. Filters combine (AND). Default order: newest join first. Pages are read from an index whatever their depth; `pagination.total` is exact for everyone, a community or a tier; with other filters exact up to 10,000 matches and an estimate above (flagged by `total_is_estimate`).",
          querystring: ListMembersQuery,
          response: {
            200: Type.Object({ success: Type.Literal(true), data: Type.Array(Type.Ref(MemberListItem), { maxItems: 100 }), pagination: MembersPagination }),
            ...authErrors,
          },
        },
      },
      async (request) => directory.list(creatorOf(request), request.query),
    );

    app.get(
      '/members/export.csv',
      {
        config: { reads: 'replica' },
        schema: {
          tags,
          summary: 'Export members as CSV',
          description: EXPORT_DESCRIPTION(exports.limits),
          querystring: ExportMembersQuery,
          response: {
            200: { description: 'CSV of the members', content: { 'text/csv': { schema: Type.String() } } },
            ...authErrors,
          },
        },
      },
      async (request, reply) => {
        // Slots are taken here (429 when none is free) and given back by `close`, whatever ends the response.
        const running = exports.open(creatorOf(request), request.query);
        reply.raw.once('close', () => void running.close());
        // A client gone before the listener was added: its 'close' has fired already.
        if (reply.raw.destroyed) void running.close();
        // The first batch is read before the status is sent, so a failure there is an ordinary error response.
        const first = await running.next();
        const stream = new CsvExportStream(running, first, {
          idleTimeoutMs: exports.limits.idleTimeoutMs,
          onIdle: () => {
            request.log.info({ idle_timeout_ms: exports.limits.idleTimeoutMs }, 'members export: the client took nothing for the idle limit; connection cut');
            request.raw.socket?.destroy();
          },
        });
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', 'attachment; filename="members.csv"')
          .header('cache-control', 'no-store')
          // A stream, not the string the OpenAPI schema describes: the type provider only knows the latter.
          .send(stream as unknown as string);
      },
    );
  };
}
