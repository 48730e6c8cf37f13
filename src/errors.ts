import { z } from 'zod';

/**
 * The one catalogue of error codes. Every failure on every interface is a `BatonError` with one of
 * these codes; adapters translate it once (problem+json, MCP tool error, GraphQL extensions).
 */
export interface ErrorSpec {
  readonly status: number;
  readonly title: string;
  readonly retryable: boolean;
  /** What to do next, in one sentence. A thrown error may give a more specific one. */
  readonly hint: string;
  /** The spec page (under /spec) that explains the rule behind the error. */
  readonly docs: string;
  /** Response headers every error of this code carries (the 401 challenge). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** RFC 6750 §3: the challenge of a 401; `error="invalid_token"` only when a token was sent and refused. */
const BEARER_CHALLENGE = 'Bearer realm="baton"';

export const ERROR_CODES = [
  'unauthenticated',
  'invalid_token',
  'forbidden_scope',
  'tool_not_allowed',
  'human_required',
  'not_found',
  'route_not_found',
  'method_not_allowed',
  'tool_renamed',
  'validation_failed',
  'invalid_parameter',
  'malformed_json',
  'malformed_request',
  'unsupported_media_type',
  'not_acceptable',
  'uri_too_long',
  'headers_too_large',
  'request_timeout',
  'payload_too_large',
  'idempotency_key_required',
  'idempotency_key_reused',
  'idempotency_in_progress',
  'invalid_precondition',
  'conflict_version',
  'invalid_transition',
  'already_claimed',
  'dependencies_pending',
  'lease_expired',
  'lease_inactive',
  'not_lease_holder',
  'assigned_to_other',
  'assignee_lease_held',
  'not_your_task',
  'separation_of_duties',
  'unknown_principal',
  'principal_disabled',
  'task_deleted',
  'not_comment_author',
  'not_schedule_owner',
  'budget_exhausted',
  'reservation_conflict',
  'reservation_lapsed',
  'not_reservation_holder',
  'run_log_full',
  'comment_deleted',
  'ask_closed',
  'not_addressee',
  'no_role_holder',
  'link_invalid',
  'link_expired',
  'link_used',
  'backoff_pending',
  'not_dead_lettered',
  'cursor_archived',
  'parent_self',
  'parent_cycle',
  'parent_too_deep',
  'too_many_subtasks',
  'blocked_by_cycle',
  'blocked_by_too_deep',
  'children_open',
  'task_not_finished',
  'invalid_search',
  'rate_limited',
  'too_many_uploads',
  'uploads_busy',
  'approval_not_pending',
  'approval_stale',
  'conflict_state',
  'invalid_signature',
  'webhook_url_refused',
  'secret_key_missing',
  'invalid_query',
  'query_too_complex',
  'internal',
  'unavailable',
  'write_contention',
  'not_configured',
  'web_app_not_built',
  'csrf_failed',
  'sign_in_failed',
  'owner_required',
  'not_confirmed',
  'workspace_not_found',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const ERRORS: Record<ErrorCode, ErrorSpec> = {
  unauthenticated: {
    status: 401,
    title: 'Authentication required',
    retryable: false,
    hint: 'Send `Authorization: Bearer <token>`; ask a Baton admin for a token (the first one is printed when the server first starts on a terminal, else written to `bootstrap-admin-token` beside its data directory; `baton admin-token` makes another).',
    docs: '/spec/api.md#authentication',
    headers: { 'www-authenticate': BEARER_CHALLENGE },
  },
  invalid_token: {
    status: 401,
    title: 'Token not accepted',
    retryable: false,
    hint: 'The token is malformed, unknown, expired or revoked; ask an admin for a new one. Do not retry with the same token.',
    docs: '/spec/api.md#authentication',
    headers: { 'www-authenticate': `${BEARER_CHALLENGE}, error="invalid_token"` },
  },
  forbidden_scope: {
    status: 403,
    title: 'Missing scope',
    retryable: false,
    hint: 'Your token lacks the scope named in `required_scope`; ask an admin for a token that has it. [[whoami]] lists your scopes.',
    docs: '/spec/api.md#scopes',
  },
  tool_not_allowed: {
    status: 403,
    title: 'Operation not in your allowlist',
    retryable: false,
    hint: "This operation is outside your agent's toolAllowlist; [[whoami]] lists what you may call.",
    docs: '/spec/api.md#scopes',
  },
  human_required: {
    status: 403,
    title: 'Only a human may do this',
    retryable: false,
    hint: 'Ask a human to perform this step, or move the task to a state you may act on (see `legal_transitions`).',
    docs: '/spec/domain-model.md#task-state-machine',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    retryable: false,
    hint: 'Check the id; list the collection to find existing ids.',
    docs: '/spec/api.md',
  },
  route_not_found: {
    status: 404,
    title: 'No such route',
    retryable: false,
    hint: 'GET /api/v1 lists every operation with its method and path.',
    docs: '/spec/api.md',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    retryable: false,
    hint: 'The `Allow` header lists the methods this path accepts.',
    docs: '/spec/api.md',
  },
  tool_renamed: {
    status: 404,
    title: 'Tool renamed',
    retryable: false,
    hint: 'Call the tool named in `renamed_to` with the same arguments: tool names use `_`, not `.`, since Baton 0.2 (tools/list names them all).',
    docs: '/spec/mcp.md#tools',
  },
  validation_failed: {
    status: 400,
    title: 'Request failed validation',
    retryable: false,
    hint: 'Fix the fields listed in `errors` (each has a JSON pointer and a message) and send again.',
    docs: '/spec/api.md#validation',
  },
  invalid_parameter: {
    status: 400,
    title: 'Invalid query or path parameter',
    retryable: false,
    hint: 'Fix the parameter named in `errors`; bounds and allowed values are in [[schema]].',
    docs: '/spec/api.md#validation',
  },
  malformed_json: {
    status: 400,
    title: 'Body is not valid JSON',
    retryable: false,
    hint: 'Send a JSON object with `Content-Type: application/json`.',
    docs: '/spec/api.md#validation',
  },
  malformed_request: {
    status: 400,
    title: 'Request is not well-formed HTTP',
    retryable: false,
    hint: 'Send a well-formed HTTP/1.1 request; percent-encode the path as UTF-8 (`%` followed by two hex digits).',
    docs: '/spec/api.md#limits',
  },
  not_acceptable: {
    status: 406,
    title: 'Cannot answer in an accepted media type',
    retryable: false,
    hint: 'Widen the Accept header: GraphQL subscriptions answer only as `text/event-stream`; everything else as JSON.',
    docs: '/spec/graphql.md',
  },
  cursor_archived: {
    status: 410,
    title: 'Cursor archived',
    retryable: false,
    hint: 'The events after this cursor were archived by the operator. Read again without `since` (a full read gives a fresh sync_cursor), or resume the timeline from `oldest_cursor`; the archived events are in the operator\'s archive file.',
    docs: '/spec/api.md#archived-events',
  },
  uri_too_long: {
    status: 414,
    title: 'URI too long',
    retryable: false,
    hint: 'A path parameter is at most 100 characters (ids are 30); check the id you sent.',
    docs: '/spec/api.md#limits',
  },
  headers_too_large: {
    status: 431,
    title: 'Request headers too large',
    retryable: false,
    hint: 'The request line and headers together are limited to 16 KiB; send fewer or shorter headers (and a shorter URL).',
    docs: '/spec/api.md#limits',
  },
  request_timeout: {
    status: 408,
    title: 'Request took too long to arrive',
    retryable: true,
    hint: 'The request was not received in time; send it again (a write with the same [[Idempotency-Key]]).',
    docs: '/spec/api.md#limits',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported content type',
    retryable: false,
    hint: 'Send the body as `Content-Type: application/json`.',
    docs: '/spec/api.md#validation',
  },
  payload_too_large: {
    status: 413,
    title: 'Body too large',
    retryable: false,
    hint: 'Bodies are limited to 1 MiB (artifact uploads: BATON_ARTIFACT_MAX_BYTES, 25 MiB by default); put long text in an artifact and reference it.',
    docs: '/spec/api.md#limits',
  },
  idempotency_key_required: {
    status: 400,
    title: 'Idempotency-Key header required',
    retryable: false,
    hint: 'Send a unique [[Idempotency-Key]] of up to 255 characters (a UUID is fine) with every write; reuse it only to retry the same request.',
    docs: '/spec/api.md#idempotency',
  },
  idempotency_key_reused: {
    status: 422,
    title: 'Idempotency key reused with a different request',
    retryable: false,
    hint: 'Use a fresh [[Idempotency-Key]] for a new request; reuse a key only to retry the identical request.',
    docs: '/spec/api.md#idempotency',
  },
  idempotency_in_progress: {
    status: 409,
    title: 'A request with this idempotency key is still running',
    retryable: true,
    hint: 'Wait for [[Retry-After]] seconds and retry with the same key; you will get the original outcome.',
    docs: '/spec/api.md#idempotency',
  },
  invalid_precondition: {
    status: 400,
    title: 'Malformed If-Match or If-None-Match',
    retryable: false,
    hint: 'Send `If-Match` as the ETag from your last read, for example `"3"` (at most 256 characters, as is `If-None-Match`); weak tags (W/) never match.',
    docs: '/spec/api.md#concurrency',
  },
  conflict_version: {
    status: 409,
    title: 'Version conflict',
    retryable: true,
    hint: 'The resource changed since you read it: read it again, reapply your change to it, and retry with `current_version` in [[If-Match]].',
    docs: '/spec/api.md#concurrency',
  },
  invalid_transition: {
    status: 422,
    title: 'Status change not allowed',
    retryable: false,
    hint: 'Pick a target from `legal_transitions`, or use the operation the hint names.',
    docs: '/spec/domain-model.md#task-state-machine',
  },
  already_claimed: {
    status: 409,
    title: 'Task already claimed',
    retryable: false,
    hint: 'Another holder has this task until `lease_expires_at`; claim the next task with [[tasks_claim_next]] instead.',
    docs: '/spec/domain-model.md#leases',
  },
  dependencies_pending: {
    status: 409,
    title: 'Task waits on other tasks',
    retryable: false,
    hint: 'The tasks in `waiting_on` must be done first; claim other work with [[tasks_claim_next]].',
    docs: '/spec/domain-model.md#leases',
  },
  lease_expired: {
    status: 409,
    title: 'Lease expired',
    retryable: false,
    hint: 'Your lease ran out (or was re-granted) and the task went back to the queue; stop work on it, re-read the task, and claim again if it is still todo.',
    docs: '/spec/domain-model.md#leases',
  },
  lease_inactive: {
    status: 409,
    title: 'Lease no longer active',
    retryable: false,
    hint: 'This lease was released or ended when the task changed status; [[leases_list holder=me state=active]] lists the leases you hold.',
    docs: '/spec/domain-model.md#leases',
  },
  not_lease_holder: {
    status: 403,
    title: 'Another principal holds the lease',
    retryable: false,
    hint: 'Only the lease holder (or a human) may change a task in progress; claim unleased work with [[tasks_claim_next]].',
    docs: '/spec/domain-model.md#leases',
  },
  assigned_to_other: {
    status: 409,
    title: 'Task assigned to someone else',
    retryable: false,
    hint: 'Only the assignee (named in `assignee`) may claim this task; claim your own or unassigned work with [[tasks_claim_next]].',
    docs: '/spec/collaboration.md#assignment',
  },
  assignee_lease_held: {
    status: 409,
    title: 'Task is held under a lease',
    retryable: false,
    hint: 'Someone other than the new assignee holds the task; send the assignment again with `release_lease: true` to end that lease in the same request.',
    docs: '/spec/collaboration.md#assignment',
  },
  not_your_task: {
    status: 403,
    title: "Another principal's task",
    retryable: false,
    hint: 'An agent assigns and changes only unassigned tasks and its own (and changes those it created), and never ends another principal\'s lease: ask a human (or an agent with agents:admin) to reassign or change it, e.g. by mentioning them in a comment on the task.',
    docs: '/spec/collaboration.md#assignment',
  },
  separation_of_duties: {
    status: 403,
    title: 'You handed this in',
    retryable: false,
    hint: 'Whoever handed work in (or did it under the lease) may not approve it: leave it in review for another reviewer, or request changes.',
    docs: '/spec/collaboration.md#review-with-feedback',
  },
  unknown_principal: {
    status: 422,
    title: 'Unknown principal',
    retryable: false,
    hint: 'Name an existing agent or human by id (`agt_…`) or by exact name: [[agents_list]] lists them (with agents:admin; without it, the ids are on the tasks and events you read, or ask a human). `errors` points at the field.',
    docs: '/spec/collaboration.md#mentions',
  },
  principal_disabled: {
    status: 422,
    title: 'Principal disabled',
    retryable: false,
    hint: 'This agent or human is disabled and cannot be given work; pick another, or ask an admin to enable it.',
    docs: '/spec/collaboration.md#assignment',
  },
  task_deleted: {
    status: 410,
    title: 'Task deleted',
    retryable: false,
    hint: 'The task was deleted: its thread and history stay readable ([[comments_list]] and [[tasks_events]]), but nothing new can be added.',
    docs: '/spec/collaboration.md#comments',
  },
  not_schedule_owner: {
    status: 403,
    title: "Not the schedule's owner",
    retryable: false,
    hint: 'A schedule is changed or deleted by its creator, a human, or a holder of agents:admin.',
    docs: '/spec/collaboration.md#recurring-work',
  },
  budget_exhausted: {
    status: 409,
    title: 'Budget exhausted',
    retryable: false,
    hint: 'Claim again after the budget resets (`resets_at`), or ask a human admin or owner to raise it (budgets_update).',
    docs: '/spec/runs.md#budgets',
  },
  reservation_conflict: {
    status: 409,
    title: 'Reserved by someone else',
    retryable: true,
    hint: '`holders` says who holds what until when: work on something else, ask again after `expires_at`, or wait for it: [[reservations_acquire]] with `wait_s` (up to 60 s).',
    docs: '/spec/collaboration.md#reservations',
  },
  reservation_lapsed: {
    status: 409,
    title: 'Reservation no longer held',
    retryable: false,
    hint: 'It was released or ran out, and someone may hold it now (a newer epoch): stop using the resource and take it again with [[reservations_acquire]].',
    docs: '/spec/collaboration.md#reservations',
  },
  not_reservation_holder: {
    status: 403,
    title: "Not the reservation's holder",
    retryable: false,
    hint: 'A reservation is renewed by its holder, and released by its holder, a human, or a holder of agents:admin.',
    docs: '/spec/collaboration.md#reservations',
  },
  run_log_full: {
    status: 409,
    title: "The run's log is full",
    retryable: false,
    hint: 'A run keeps at most 500 log lines; store longer output as an artifact ([[artifacts_create]]) and log a line that names it.',
    docs: '/spec/runs.md#the-log',
  },
  not_comment_author: {
    status: 403,
    title: 'Not the comment\'s author',
    retryable: false,
    hint: 'Only the author may edit or delete a comment; a human with scope agents:admin may delete any. Post a new comment instead.',
    docs: '/spec/collaboration.md#comments',
  },
  ask_closed: {
    status: 409,
    title: 'Ask closed',
    retryable: false,
    hint: 'The ask was answered, cancelled, or passed its deadline (then its default applies); `ask_status` and `answer` say which. [[asks_get]] reads it.',
    docs: '/spec/asks.md#answering',
  },
  link_invalid: {
    status: 404,
    title: 'Not a link of this server',
    retryable: false,
    hint: 'Open the item from your inbox instead; a link from a notification works only as it was sent, and only for the person it was sent to.',
    docs: '/spec/notifications.md#links',
  },
  link_expired: {
    status: 410,
    title: 'Link expired',
    retryable: false,
    hint: 'Open the item from your inbox instead (BATON_NOTIFY_LINK_TTL_S sets how long links work).',
    docs: '/spec/notifications.md#links',
  },
  link_used: {
    status: 409,
    title: 'Link already used',
    retryable: false,
    hint: 'Each link in a notification works once; open the item from your inbox instead.',
    docs: '/spec/notifications.md#links',
  },
  not_addressee: {
    status: 403,
    title: 'Not asked of you',
    retryable: false,
    hint: 'Only a principal the ask was addressed to, a holder of a role it was addressed to, or a human with agents:admin answers it.',
    docs: '/spec/asks.md#answering',
  },
  no_role_holder: {
    status: 422,
    title: 'No one holds the role',
    retryable: false,
    hint: 'Address the ask to a role an enabled human holds (`held_roles`; [[agents_set_role]] gives one), or to a principal by name; `errors` points at the field.',
    docs: '/spec/asks.md#asks',
  },
  comment_deleted: {
    status: 409,
    title: 'Comment deleted',
    retryable: false,
    hint: 'The comment was deleted; its tombstone stays in the thread. Post a new comment instead.',
    docs: '/spec/collaboration.md#comments',
  },
  backoff_pending: {
    status: 409,
    title: 'Task is not claimable yet',
    retryable: true,
    hint: 'The task waits until `not_before` (see [[Retry-After]]): it was scheduled for later, or it failed its last attempt and is backing off; claim other work with [[tasks_claim_next]] meanwhile.',
    docs: '/spec/collaboration.md#attempts-and-the-dead-letter',
  },
  not_dead_lettered: {
    status: 409,
    title: 'Task is not in the dead-letter',
    retryable: false,
    hint: 'Only a task whose attempts are exhausted (blocked, `blocked_reason: attempts_exhausted`) can be requeued; [[tasks_list blocked_reason=attempts_exhausted]] lists them.',
    docs: '/spec/collaboration.md#attempts-and-the-dead-letter',
  },
  parent_self: {
    status: 422,
    title: 'A task cannot be its own parent',
    retryable: false,
    hint: 'Send another task\'s id as `parent_id`, or null to make the task top-level.',
    docs: '/spec/collaboration.md#subtasks',
  },
  parent_cycle: {
    status: 422,
    title: 'Parent would make a cycle',
    retryable: false,
    hint: 'The parent you named is this task or one of its descendants (`cycle` lists the loop, each task the child of the next); pick a task outside this subtree, or move the descendant first.',
    docs: '/spec/collaboration.md#subtasks',
  },
  parent_too_deep: {
    status: 422,
    title: 'Subtasks nested too deep',
    retryable: false,
    hint: 'Trees are at most `limit` levels deep, counting this task\'s own subtree; attach it higher up, or flatten the tree.',
    docs: '/spec/collaboration.md#subtasks',
  },
  too_many_subtasks: {
    status: 422,
    title: 'Parent has too many subtasks',
    retryable: false,
    hint: 'A task has at most `limit` live subtasks; attach this one to another parent (group the subtasks under intermediate tasks), or delete subtasks that are no longer needed.',
    docs: '/spec/collaboration.md#task-graph',
  },
  blocked_by_cycle: {
    status: 422,
    title: 'Blockers would make a cycle',
    retryable: false,
    hint: 'The task you named already waits on this one (`cycle` lists the chain, each task waiting on the next); drop that blocker, or first remove an edge of the cycle with tasks_update.',
    docs: '/spec/collaboration.md#task-graph',
  },
  blocked_by_too_deep: {
    status: 422,
    title: 'Chain of blockers too long',
    retryable: false,
    hint: 'Chains of blockers are at most `limit` tasks long, counting what waits on this task; name a blocker nearer the start of its chain, or flatten the plan (one task may wait on up to 20 others at once).',
    docs: '/spec/collaboration.md#task-graph',
  },
  children_open: {
    status: 409,
    title: 'Task has open subtasks',
    retryable: false,
    hint: 'Finish or cancel the subtasks listed in `open_children` first, or send `cancel_children: true` with the same request to cancel them with it.',
    docs: '/spec/collaboration.md#subtasks',
  },
  task_not_finished: {
    status: 409,
    title: 'Task is not finished',
    retryable: false,
    hint: 'Only a done or cancelled task can be archived: finish or cancel it first, or send `status` with `archived: true` in one request.',
    docs: '/spec/collaboration.md#archive',
  },
  invalid_search: {
    status: 400,
    title: 'Search has no terms',
    retryable: false,
    hint: 'Give `q` at least one word that is not a stop word (web-search syntax: words, "quoted phrases", -excluded, or).',
    docs: '/spec/collaboration.md#search',
  },
  rate_limited: {
    status: 429,
    title: 'Rate limit exceeded',
    retryable: true,
    hint: 'Wait [[Retry-After]] seconds, then continue; the RateLimit header on every response shows the budget left.',
    docs: '/spec/api.md#rate-limits',
  },
  too_many_uploads: {
    status: 429,
    title: 'Too many uploads in progress for this token',
    retryable: true,
    hint: 'Wait for your other artifact uploads to finish (or [[Retry-After]] seconds), then send this one again with the same [[Idempotency-Key]]; nothing ran.',
    docs: '/spec/api.md#limits',
    headers: { 'retry-after': '1' },
  },
  uploads_busy: {
    status: 503,
    title: 'Too many uploads in progress on this server',
    retryable: true,
    hint: 'Wait [[Retry-After]] seconds, then send the same request again with the same [[Idempotency-Key]]; nothing ran.',
    docs: '/spec/api.md#limits',
    headers: { 'retry-after': '1' },
  },
  approval_not_pending: {
    status: 409,
    title: 'Approval already decided or expired',
    retryable: false,
    hint: 'Read the approval ([[approvals_get]]) for its outcome; a new request makes a new approval.',
    docs: '/spec/api.md#approvals',
  },
  approval_stale: {
    status: 409,
    title: 'Target changed since the approval was requested',
    retryable: false,
    hint: 'The resource changed after the request was made, so this approval no longer describes what would happen; deny it and ask the requester to send the request again.',
    docs: '/spec/api.md#approvals',
  },
  conflict_state: {
    status: 409,
    title: 'Conflicts with the current state',
    retryable: false,
    hint: 'Read the resource again; `detail` says what is in the way.',
    docs: '/spec/api.md',
  },
  invalid_signature: {
    status: 400,
    title: 'Webhook signature not valid',
    retryable: false,
    hint: 'Sign the exact raw body with the secret configured for this route, with a current timestamp (5 minutes tolerance); nothing was recorded.',
    docs: '/spec/inbound.md#verification',
  },
  webhook_url_refused: {
    status: 422,
    title: 'Webhook URL refused',
    retryable: false,
    hint: 'Give an http(s) URL whose host resolves only to public addresses; loopback, private, link-local and metadata addresses are refused unless the operator allows them in BATON_WEBHOOK_ALLOW_PRIVATE (1, or a list of CIDRs and hosts).',
    docs: '/spec/realtime.md#outbound-webhooks',
  },
  secret_key_missing: {
    status: 503,
    title: 'Server has no secret key',
    retryable: false,
    hint: 'The operator must set BATON_SECRET_KEY (32+ characters) on every instance before webhooks can be created; ask them.',
    docs: '/spec/realtime.md#secrets',
  },
  invalid_query: {
    status: 400,
    title: 'GraphQL document not valid',
    retryable: false,
    hint: 'Fix the query as the message says (fields and arguments are in the schema: introspect POST /graphql); send variables that match their declared types.',
    docs: '/spec/graphql.md#errors',
  },
  query_too_complex: {
    status: 400,
    title: 'GraphQL query too deep or too costly',
    retryable: false,
    hint: 'Select fewer nested fields, ask for smaller pages (`limit`), or split the query; `limit` and `found` give the bound and what the query measured.',
    docs: '/spec/graphql.md#limits',
  },
  internal: {
    status: 500,
    title: 'Internal error',
    retryable: true,
    hint: 'Something failed on our side and nothing was written; retry (a write with the same [[Idempotency-Key]]). Quote `request_id` if it keeps failing.',
    docs: '/spec/errors.md',
  },
  unavailable: {
    status: 503,
    title: 'Service unavailable',
    retryable: true,
    hint: 'The database did not answer; retry after [[Retry-After]] seconds, a write with the same [[Idempotency-Key]].',
    docs: '/spec/errors.md',
  },
  write_contention: {
    status: 503,
    title: 'The write kept colliding with concurrent writes',
    retryable: true,
    hint: 'Nothing was written: the database broke a lock conflict with other writes, and the server retried it three times. Send the same request again with the same [[Idempotency-Key]] after [[Retry-After]] seconds.',
    docs: '/spec/errors.md',
    headers: { 'retry-after': '1' },
  },
  web_app_not_built: {
    status: 503,
    title: 'The web app is not built',
    retryable: false,
    hint: 'Run `npm run build:web` in the checkout (`npm start` does it for you), then reload; the API answers meanwhile.',
    docs: '/spec/web.md',
  },
  not_configured: {
    status: 503,
    title: 'Not configured on this server',
    retryable: false,
    hint: 'The operator must set the environment variable named in `detail` and restart; nothing was recorded.',
    docs: '/spec/inbound.md',
  },
  csrf_failed: {
    status: 403,
    title: 'Cross-site request refused',
    retryable: false,
    hint: 'A write made with the session cookie must carry the `x-csrf-token` header from GET /auth/session; reload the app. Scripts and agents send a bearer token instead.',
    docs: '/spec/identity.md#csrf',
  },
  workspace_not_found: {
    status: 404,
    title: 'Workspace not found',
    retryable: false,
    hint: 'You are not a member of that workspace (or it does not exist): the two look the same from outside. List yours with workspaces_list (`baton workspaces list`).',
    docs: '/spec/identity.md#workspaces',
  },
  sign_in_failed: {
    status: 400,
    title: 'Sign-in refused',
    retryable: false,
    hint: 'Start again from the sign-in page (GET /auth/oidc/login); `detail` says what the provider or Baton refused. Nothing was recorded.',
    docs: '/spec/identity.md#single-sign-on',
  },
  owner_required: {
    status: 403,
    title: 'Owner required',
    retryable: false,
    hint: "Only an owner makes an owner or changes an owner's role; ask one of the owners ([[agents_list]]).",
    docs: '/spec/identity.md#roles',
  },
  not_confirmed: {
    status: 409,
    title: 'Not approved in the MCP host',
    retryable: false,
    hint: 'Nothing ran: the person at your MCP host denied or dismissed the confirmation. Call the tool again only if they want it done.',
    docs: '/spec/mcp.md#elicitation',
  },
};

/** Extra members a problem document may carry beyond the standard ones. */
export type ProblemExtra = Record<string, unknown>;

/** The one error type of the service layer. `detail` names the resource and its state. */
export class BatonError extends Error {
  override name = 'BatonError';
  readonly code: ErrorCode;
  readonly detail: string;
  readonly hint: string;
  readonly extra: ProblemExtra;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, detail: string, options: { hint?: string; extra?: ProblemExtra; headers?: Record<string, string> } = {}) {
    super(detail);
    this.code = code;
    this.detail = detail;
    this.hint = options.hint ?? ERRORS[code].hint;
    this.extra = options.extra ?? {};
    this.headers = { ...ERRORS[code].headers, ...options.headers };
  }

  get status(): number {
    return ERRORS[this.code].status;
  }

  get retryable(): boolean {
    return ERRORS[this.code].retryable;
  }
}

/**
 * Turns anything thrown into a `BatonError`: a database that did not answer becomes `unavailable`
 * (retryable, 503); other unknown failures become `internal` and never leak a stack.
 */
export function toBatonError(error: unknown): BatonError {
  if (error instanceof BatonError) return error;
  if (isDatabaseUnavailable(error)) {
    return new BatonError('unavailable', 'The database did not answer in time, or the connection to it was lost.', { headers: { 'retry-after': '1' } });
  }
  if (isTransactionConflict(error)) {
    return new BatonError('write_contention', 'The database broke off this write three times to end a deadlock or serialization failure with concurrent writes; nothing was written.');
  }
  return new BatonError('internal', 'The server failed while handling this request; nothing was written.');
}

/**
 * The database rolled the whole transaction back to end a deadlock (SQLSTATE 40P01) or a
 * serialization failure (40001): nothing of it was written, and running it again can succeed.
 */
export function isTransactionConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && (code === '40P01' || code === '40001');
}

/**
 * The failure is the database's or the connection's, not the request's: the server ended the
 * session or refused new ones (SQLSTATE classes 08 and 53, 57P01–57P03), a statement or lock
 * wait ran out of time (57014, 55P03), a prepared statement went stale under a migration (0A000
 * "cached plan…", 26000), the host became a read-only standby (25006), the network failed, or the
 * client stopped waiting. Retrying can succeed.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (/^(08|53|57P)/.test(code) || UNAVAILABLE_SQLSTATES.has(code) || NETWORK_ERRNOS.has(code)) return true;
    if (code === '0A000' && error.message.includes('cached plan must not change result type')) return true;
  }
  return CONNECTION_MESSAGES.test(error.message);
}

// 25006: a write reached a standby (the primary was demoted, or a failover is under way).
const UNAVAILABLE_SQLSTATES = new Set(['57014', '55P03', '26000', '25006']);
const NETWORK_ERRNOS = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);
const CONNECTION_MESSAGES = /Connection terminated|Query read timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended|Client was closed and is not queryable/;

/** An RFC 9457 problem document as every interface returns it. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  hint: string;
  retryable: boolean;
  docs_url: string;
  [extra: string]: unknown;
}

/**
 * How one interface words a hint. Hints name the way forward as references in `[[…]]`, which each
 * interface renders its own way: `[[tasks_claim_next]]` is `POST /api/v1/tasks/claim` over REST,
 * `tasks_claim_next` over MCP and the `claimNextTask` mutation over GraphQL; arguments follow the
 * name (`[[leases_list holder=me state=active]]`). Four names are the write-safety inputs, the
 * input's schema and the wait before a retry: `[[Idempotency-Key]]`, `[[If-Match]]`, `[[schema]]`
 * and `[[Retry-After]]`.
 */
export interface Dialect {
  /** A call of the named operation with these arguments. */
  call(operation: string, args: Readonly<Record<string, string>>): string;
  /** The input that carries the idempotency key, and the one that carries the expected version. */
  readonly idempotencyKey: string;
  readonly expectedVersion: string;
  /** Where the accepted inputs, their bounds and values are described. */
  readonly schema: string;
  /** Whether `errors` entries say where a field travels (`path`, `query`, `body`): only over HTTP routes. */
  readonly fieldLocations: boolean;
  /** Where the seconds to wait before retrying are: the `Retry-After` header over HTTP, the problem's `retry_after_s` where no header reaches the caller. */
  readonly retryAfter: string;
}

/** A hint's references, `[[name key=value …]]`. */
const HINT_REFERENCE = /\[\[([^\]]+)\]\]/g;

/** The hint with its references worded for one interface. */
export function renderHint(hint: string, dialect: Dialect): string {
  return hint.replace(HINT_REFERENCE, (_match, reference: string) => {
    const [name = '', ...args] = reference.trim().split(/\s+/);
    if (name === 'Idempotency-Key') return dialect.idempotencyKey;
    if (name === 'If-Match') return dialect.expectedVersion;
    if (name === 'schema') return dialect.schema;
    if (name === 'Retry-After') return dialect.retryAfter;
    return dialect.call(name, Object.fromEntries(args.map((arg) => [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)])));
  });
}

/** The operation names a hint refers to (a test holds them to the registry). */
export function hintReferences(hint: string): string[] {
  return [...hint.matchAll(HINT_REFERENCE)].map((m) => m[1]?.trim().split(/\s+/)[0] ?? '').filter((name) => !['Idempotency-Key', 'If-Match', 'schema', 'Retry-After'].includes(name));
}

/** Hints worded by operation names alone, for text no one interface serves (an approval's stored result). */
export const OPERATION_NAMES: Dialect = {
  call: (operation, args) => (Object.keys(args).length === 0 ? `\`${operation}\`` : `\`${operation}\` with ${JSON.stringify(args)}`),
  idempotencyKey: 'idempotency key',
  expectedVersion: 'expected version',
  schema: 'the operation\'s input schema',
  fieldLocations: true,
  retryAfter: '`retry_after_s`',
};

/** Renders the problem document for an error, with absolute `type` and `docs_url` under `baseUrl`, worded for one interface. */
export function toProblem(error: BatonError, baseUrl: string, dialect: Dialect): Problem {
  const spec = ERRORS[error.code];
  const errors = error.extra['errors'];
  // Extras first: they may add members but never overwrite the standard ones.
  return {
    ...error.extra,
    ...(Array.isArray(errors) && !dialect.fieldLocations ? { errors: errors.map(withoutLocation) } : {}),
    type: `${baseUrl}/errors/${error.code}`,
    title: spec.title,
    status: spec.status,
    code: error.code,
    detail: error.detail,
    hint: renderHint(error.hint, dialect),
    retryable: spec.retryable,
    docs_url: `${baseUrl}${spec.docs}`,
    ...retryAfterOf(error),
  };
}

/**
 * `retry_after_s`: the seconds of the error's Retry-After header, in the document too. MCP tool
 * errors and GraphQL field errors reach their caller without HTTP's headers; with it, every
 * interface carries the same wait.
 */
function retryAfterOf(error: BatonError): { retry_after_s?: number } {
  const seconds = Number(error.headers['retry-after']);
  return Number.isFinite(seconds) && seconds >= 0 ? { retry_after_s: seconds } : {};
}

function withoutLocation(entry: unknown): unknown {
  if (typeof entry !== 'object' || entry === null) return entry;
  const { location: _location, ...rest } = entry as Record<string, unknown>;
  return rest;
}

/** Every error code, as a schema (the OpenAPI document's `ErrorCode`). */
export const errorCode = z.enum(ERROR_CODES);

/** The problem document's schema, for OpenAPI and MCP (derived JSON Schema, never hand-written). */
export const problemSchema = z
  .object({
    type: z.string().describe('`{base}/errors/<code>`: a page documenting the code.'),
    title: z.string(),
    status: z.int(),
    code: errorCode.describe('Stable: decide your next call from this, never from text.'),
    detail: z.string().describe('What happened, naming the resource and its state.'),
    hint: z.string().describe('What to do next.'),
    retryable: z.boolean().describe('Whether the same request may succeed if sent again (after retry_after_s when given).'),
    docs_url: z.string(),
    legal_transitions: z.array(z.string()).optional().describe('On transition errors: the statuses reachable now.'),
    errors: z
      .array(z.object({ pointer: z.string(), detail: z.string(), location: z.enum(['path', 'query', 'body']).optional().describe('REST only: where the field travels.') }))
      .optional()
      .describe('On validation errors: one entry per bad field, as a JSON pointer into the input.'),
  })
  .catchall(z.unknown());
