import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/operations/index.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { fetchDocument, type OpenApiDocument, redoclyLint, resolveParameter, resolveResponse, schemaCompiler } from './openapi-document.ts';

let t: TestServer;
let document: OpenApiDocument;
beforeAll(async () => {
  t = await startTestServer();
  document = await fetchDocument(t);
});
afterAll(() => t.close());

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

describe('GET /api/v1/openapi.json', () => {
  it('answers JSON without a token', async () => {
    const res = await t.request('GET', '/api/v1/openapi.json', { token: null });
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers?.[0]?.url).toBe('http://baton.test');
  });

  it('is a valid OpenAPI 3.1 document for @readme/openapi-parser', async () => {
    const result = await validate(structuredClone(document) as never);
    expect(result.valid ? [] : result.errors, result.valid ? '' : compileErrors(result)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(result.specification).toBe('OpenAPI');
    expect(result.warnings).toEqual([]);
  });

  it('is checked by a validator that does reject a broken document', async () => {
    const withoutInfo = structuredClone(document) as { info?: unknown };
    delete withoutInfo.info;
    expect((await validate(withoutInfo as never)).valid).toBe(false);

    const undeclaredPathParameter = structuredClone(document) as unknown as { paths: Record<string, unknown> };
    undeclaredPathParameter.paths['/api/v1/things/{thing_id}'] = { get: { operationId: 'things.get', responses: { 200: { description: 'ok' } } } };
    expect((await validate(undeclaredPathParameter as never)).valid).toBe(false);
  });

  it('has every schema compile under JSON Schema 2020-12, strict', () => {
    const compile = schemaCompiler(document);
    const failures: string[] = [];
    const tryCompile = (path: string[]) => {
      try {
        compile(path);
      } catch (error) {
        failures.push(`${path.join(' ')}: ${(error as Error).message}`);
      }
    };
    for (const name of Object.keys(document.components.schemas)) tryCompile(['components', 'schemas', name]);
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        (op.parameters ?? []).forEach((parameter, i) => tryCompile([...resolveParameter(document, ['paths', path, method, 'parameters', String(i)], parameter).path, 'schema']));
        for (const type of Object.keys(op.requestBody?.content ?? {})) tryCompile(['paths', path, method, 'requestBody', 'content', type, 'schema']);
        for (const [status, response] of Object.entries(op.responses)) {
          for (const type of Object.keys(response.content ?? {})) tryCompile(['paths', path, method, 'responses', status, 'content', type, 'schema']);
        }
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('the document and the registry', () => {
  it('has every registry operation at its path and method, with its name as operationId', () => {
    for (const op of operations) {
      const entry = document.paths[`/api/v1${op.http.path}`]?.[op.http.method.toLowerCase()];
      expect(entry, `${op.name}: ${op.http.method} /api/v1${op.http.path}`).toBeDefined();
      expect(entry?.operationId).toBe(op.name);
    }
  });

  it('has no operation the registry does not define', () => {
    const documented = Object.values(document.paths).flatMap((item) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([, op]) => op.operationId),
    );
    // Besides the registry: the routes the service itself serves, documented so a generated client sees them all.
    const service = [
      ...['manifest', 'openapi', 'artifacts_content', 'healthz', 'readyz', 'metrics', 'spec', 'specPage', 'errorPage'],
      ...['graphql', 'graphqlGet', 'graphqlOptions', 'mcp', 'mcpGet', 'mcpDelete', 'a2a', 'agentCard', 'oidcLogin', 'oidcCallback', 'oidcLogout', 'authSession', 'authWorkspace', 'authLogout', 'inboundPayments', 'inboundAuth', 'cronKeepalive', 'cronKeepalivePost'],
    ];
    expect(documented.sort()).toEqual([...operations.map((op) => op.name), ...service].sort());
  });

  it('declares each success status with a JSON body (an event stream for streams), and problems as the default', () => {
    for (const op of operations) {
      const entry = document.paths[`/api/v1${op.http.path}`]?.[op.http.method.toLowerCase()];
      const answer = entry?.responses[String(op.http.successStatus ?? 200)];
      const success = answer && resolveResponse(document, [], answer).response;
      expect(success?.content?.[op.kind === 'stream' ? 'text/event-stream' : 'application/json']?.schema, op.name).toBeDefined();
      const problem = entry?.responses.default && resolveResponse(document, [], entry.responses.default).response;
      expect(problem?.content?.['application/problem+json']?.schema, op.name).toEqual({ $ref: '#/components/schemas/Problem' });
    }
  });

  it('requires an Idempotency-Key header on every write, and on no read', () => {
    for (const op of operations) {
      const entry = document.paths[`/api/v1${op.http.path}`]?.[op.http.method.toLowerCase()];
      const key = entry?.parameters?.map((p) => resolveParameter(document, [], p).parameter).find((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
      if (op.kind === 'write') {
        expect(key?.required, op.name).toBe(true);
        expect(key?.schema, op.name).toMatchObject({ type: 'string', maxLength: 255 });
      } else {
        expect(key, op.name).toBeUndefined();
      }
    }
  });

  it('declares every path parameter as required', () => {
    for (const op of operations) {
      const entry = document.paths[`/api/v1${op.http.path}`]?.[op.http.method.toLowerCase()];
      for (const [, name] of op.http.path.matchAll(/\{(\w+)\}/g)) {
        const parameter = (entry?.parameters ?? []).map((p) => resolveParameter(document, [], p).parameter).find((p) => p.in === 'path' && p.name === name);
        expect(parameter?.required, `${op.name} {${name}}`).toBe(true);
      }
    }
  });
});

/** The app's routes from Fastify's route tree, as `METHOD /path/{param}`; HEAD left out (Fastify adds one to every GET). */
function servedRoutes(tree: string): string[] {
  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^(.*?)[└├]── (\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    const path = `${stack[depth - 1] ?? ''}${match[2] ?? ''}`.replace(/:(\w+)/g, '{$1}');
    stack[depth] = path;
    for (const method of match[3]?.split(', ') ?? []) if (method !== 'HEAD') routes.push(`${method} ${path}`);
  }
  return routes;
}

describe('the document and the app', () => {
  it('documents every route the app serves, but the web app pages; and serves every route it documents', async () => {
    // /api/v2's routes are in its own document (GET /api/v2/openapi.json).
    const v2 = (await t.request('GET', '/api/v2/openapi.json', { token: null })).json<OpenApiDocument>();
    const documented = [document, v2].flatMap((doc) =>
      Object.entries(doc.paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((method) => METHODS.includes(method))
          .map((method) => `${method.toUpperCase()} ${path}`),
      ),
    );
    const served = servedRoutes(t.app.printRoutes({ commonPrefix: false }));
    expect(served).toContain('GET /api/v1/artifacts/{id}/content');
    expect(documented.filter((route) => !served.includes(route))).toEqual([]);
    // What the document leaves out is the web app: pages for a browser (a 503 problem while it is not built).
    // A wildcard is the web app's static assets (Fastify's route tree prints `/assets/*` under a prefix it shares, as `/*`).
    for (const route of served.filter((r) => !documented.includes(r) && !r.endsWith('*'))) {
      const [method = '', path = ''] = route.split(' ');
      expect(method, route).toBe('GET');
      expect(path, route).not.toMatch(/^\/(api|graphql|mcp|spec|errors)\b/);
      const res = await t.request('GET', path.replace(/\{\w+\}/g, 'x'), { token: null });
      expect(String(res.headers['content-type']), route).toMatch(/^text\/(html|plain)/);
    }
  });

  // Issue 38 asks 200 KB; archived tasks had taken it to 208,839 B. Each list's page stated once
  // (`Page`), a nullable value as one schema, no restated default security and HTTP's reason
  // phrases as success descriptions brought it to 204,722 B. How it is measured, and what would
  // leave room under 200 KB: spec/api.md, "Context budgets".
  it('is at most 200 KB, its shared schemas and parameters named once under components', async () => {
    const res = await t.request('GET', '/api/v1/openapi.json', { token: null });
    expect(Buffer.byteLength(res.body)).toBeLessThanOrEqual(200 * 1024);
    // A nullable value is one schema (`type: [T, "null"]`), not Zod's `anyOf` with `null`.
    expect(res.body).not.toMatch(/"anyOf":\[\{(?![^{}]*"(enum|const|\$ref)")[^{}]*"type":"\w+"[^{}]*\},\{"type":"null"\}\]/);
    for (const name of ['TaskId', 'LeaseId', 'Limit', 'Cursor']) expect(document.components.parameters?.[name], name).toBeDefined();
    for (const name of ['Task', 'TaskCompact', 'ClaimedTask', 'TaskFields', 'NextAction', 'Lease', 'Claim', 'Comment', 'Event', 'Approval', 'Webhook', 'Agent', 'Token', 'Artifact', 'Problem', 'Manifest', 'ManifestCompact']) {
      expect(document.components.schemas[name], name).toBeDefined();
    }
    const claim = document.paths['/api/v1/tasks/claim']?.post;
    const claimAnswer = claim?.responses['200'];
    expect(JSON.stringify(claimAnswer && resolveResponse(document, [], claimAnswer).response)).toContain('"$ref":"#/components/schemas/Claim"');
    // An answer several operations give alike is one named response (a task written, an approval asked for).
    for (const name of ['TaskWritten', 'ApprovalAccepted', 'NotModified']) expect(document.components.responses?.[name], name).toBeDefined();
    // The claim's body may be left out: every member has a default, and the server takes none.
    expect(claim?.requestBody).toBeDefined();
    expect(claim?.requestBody?.required).not.toBe(true);
    const claimed = await t.request('POST', '/api/v1/tasks/claim');
    expect(claimed.status, claimed.body).toBe(200);
  });

  it('keeps every component schema name it has served: the type names of a generated client are part of v1', () => {
    // The named entities, then the schemas several places repeat (`shareSchemas`, named after the member they fill).
    const served = [
      ...['Problem', 'ErrorCode', 'Task', 'TaskCompact', 'ClaimedTask', 'TaskFields', 'TaskLease', 'TaskReservation', 'StatusCounts', 'NextAction', 'Handoff', 'ActorRef'],
      ...['PrincipalRef', 'ArtifactRef', 'Artifact', 'Discussion', 'Lease', 'Claim', 'EndedLease', 'Comment', 'Event', 'Approval', 'Webhook', 'WebhookWithSecret'],
      ...['Delivery', 'Attempts', 'NextCursor', 'SyncCursor', 'NotificationPreferences', 'Agent', 'Token', 'Run', 'Budget', 'InsightFigures', 'InsightDuration'],
      ...['Schedule', 'Template', 'Reservation', 'Ask', 'Session', 'Manifest', 'ManifestCompact'],
      ...['TaskId', 'TaskStatus', 'Version', 'WaitingOn', 'OpenAsks', 'TaskReservations', 'TaskArtifacts', 'LegalTransitions', 'NextActions', 'NotBefore'],
      ...['BlockedReason', 'LeaseState', 'OverdueAt', 'Scopes', 'TokenPrefix', 'RunOutcome', 'RunUsage', 'ResetsAt', 'CostByCurrency', 'ManifestScopes'],
      ...['ManifestFeatures', 'TaskStatuses', 'Priority', 'Labels', 'Assignee', 'MaxAttempts', 'ReservationRequest', 'Label', 'LabelFilter', 'MinPriority'],
      ...['LeaseTtl', 'RetryAfterS', 'NextClaimableAt', 'EventFields', 'EventPage', 'InboxItem', 'InboxCounts', 'FailureCode', 'ReleasedLease', 'BudgetLimit'],
      ...['ScheduledTemplate', 'EventTypeFilter', 'Scope', 'Page'],
    ];
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(served));
  });

  it('requires in each view the members that view always carries', () => {
    const required = (name: string) => (document.components.schemas[name] as { required?: string[] }).required ?? [];
    expect(required('ClaimedTask')).toEqual(expect.arrayContaining(['id', 'title', 'description', 'labels', 'lease', 'next_actions', 'version']));
    expect(required('TaskCompact')).toEqual(expect.arrayContaining(['id', 'title', 'labels', 'lease', 'next_actions', 'legal_transitions']));
    // The full view: every member, but the discussion only tasks_get adds, the waits (open_asks, overdue_asks, review_overdue), reservations, max_cost and archived_at, present only when set.
    // Task is TaskFields (its members, stated once) with every member it always carries required.
    const task = document.components.schemas['TaskFields'] as { properties: Record<string, unknown> };
    expect(document.components.schemas['Task']).toMatchObject({ allOf: [{ $ref: '#/components/schemas/TaskFields' }] });
    const whereSet = ['discussion', 'open_asks', 'overdue_asks', 'review_overdue', 'reservations', 'max_cost', 'max_cost_currency', 'archived_at'];
    expect(required('Task').sort()).toEqual(Object.keys(task.properties).filter((p) => !whereSet.includes(p)).sort());
    expect(required('TaskLease')).toEqual(expect.arrayContaining(['id', 'epoch', 'expires_at']));
    expect(required('Claim')).toEqual(['task', 'lease', 'discussion']);
    expect(required('ManifestCompact')).toEqual(expect.arrayContaining(['next_actions', 'operations', 'you']));
  });

  it("states a page's members once (Page), each list answer closed over them and its own data", () => {
    const compile = schemaCompiler(document);
    const answer = document.paths['/api/v1/tasks']?.get?.responses['200'];
    expect(answer?.content?.['application/json']?.schema).toMatchObject({ allOf: [{ $ref: '#/components/schemas/Page' }], unevaluatedProperties: false });
    const validate = compile(['paths', '/api/v1/tasks', 'get', 'responses', '200', 'content', 'application/json', 'schema']);
    const page = { data: [], has_more: false, next_cursor: null, sync_cursor: null };
    expect(validate(page), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...page, extra: 1 })).toBe(false);
    expect(validate({ data: [] })).toBe(false);
    expect(validate({ ...page, data: [{ id: 'x' }] })).toBe(false);
  });

  it('types both views of the manifest, as served', async () => {
    const compile = schemaCompiler(document);
    const { token } = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:claim'] });
    for (const [name, request] of [
      ['ManifestCompact', { token }],
      ['Manifest', { token: null }],
      ['Manifest', {}],
    ] as const) {
      const res = await t.request('GET', '/api/v1', request);
      const validate = compile(['components', 'schemas', name]);
      expect(validate(res.json()), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it('passes Redocly CLI lint (recommended, redocly.yaml) with 0 errors and 0 warnings', async () => {
    const lint = await redoclyLint(document);
    expect(lint.problems).toEqual([]);
    expect(lint.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(lint.code).toBe(0);
  }, 60_000);
});
