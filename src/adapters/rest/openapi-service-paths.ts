import { json, problemFor, RATE_HEADERS, ref, schemaRef } from './openapi-parts.ts';
import { API_PREFIX } from './routes.ts';

type PathItems = Record<string, Record<string, unknown>>;

/** A route that needs a token: the document's own `security`, so it states none. */
const withToken = (summary: string, description: string, responses: Record<string, unknown>, tag = 'service') => ({ summary, description, tags: [tag], responses });
/** A route that answers with or without a token. */
const open = (summary: string, description: string, responses: Record<string, unknown>, tag?: string) => ({ ...withToken(summary, description, responses, tag), security: [{}, { bearer: [] }] });
const markdown = (description: string) => ({ description, content: { 'text/markdown': { schema: { type: 'string' } } } });
const path = (name: string, schema: Record<string, unknown> = { type: 'string', maxLength: 100 }) => ({ name, in: 'path', required: true, schema });

/** The answers several routes outside the registry give alike, each named once under `components/responses`. */
export function serviceResponses() {
  return {
    GraphqlResponse: { ...json('A GraphQL response.'), headers: RATE_HEADERS },
    JsonRpcResponse: { ...json('A JSON-RPC response, or an SSE stream of them.'), headers: RATE_HEADERS },
    JsonRpcAnswer: { ...json('A JSON-RPC answer.'), headers: RATE_HEADERS },
  };
}
const answer = (name: keyof ReturnType<typeof serviceResponses>) => ({ $ref: `#/components/responses/${name}` });

/**
 * The routes outside the registry, documented so a generated client sees every route Baton serves
 * (test/openapi/document.test.ts compares them with the app's routes). Not here: the web app's
 * pages and assets (HTML for a browser), and the HEAD twin of every GET.
 */
export function servicePaths(): PathItems {
  return { ...metaPaths(), ...docsPaths(), ...protocolPaths(), ...inboundPaths(), ...identityPaths() };
}

/** Single sign-on and the web app's cookie session (spec/identity.md): browser routes, documented so no route is hidden. */
function identityPaths(): PathItems {
  const redirect = (description: string) => ({ '302': { description }, '303': { description }, '400': problemFor(400) });
  const browser = { security: [] };
  return {
    '/auth/oidc/login': {
      get: {
        ...open('Start single sign-on', 'Redirects to the OpenID provider (authorization code with PKCE); `return_to` is a same-origin path. 404 when no provider is configured.', { ...redirect('To the provider.'), '404': problemFor(404) }, 'identity'),
        operationId: 'oidcLogin',
        parameters: [{ name: 'return_to', in: 'query', schema: { type: 'string', maxLength: 2048 } }],
        ...browser,
      },
    },
    '/auth/oidc/callback': {
      get: { ...open('Finish single sign-on', "The provider's redirect: checks state, nonce and the ID token, opens a cookie session, and redirects to `return_to`.", { ...redirect('To the page the sign-in started from.'), '403': problemFor(403), '404': problemFor(404) }, 'identity'), operationId: 'oidcCallback', ...browser },
    },
    '/auth/oidc/backchannel-logout': {
      post: { ...open('Provider logout', 'Ends the sessions a provider’s `logout_token` names.', { '200': { description: 'OK' }, '400': problemFor(400), '404': problemFor(404) }, 'identity'), operationId: 'oidcLogout', ...browser },
    },
    '/auth/session': {
      get: { ...open('The cookie session', 'Whether the cookie is a live session, the CSRF token its writes send, and the sign-in offer.', { '200': json('`{oidc, session, csrf_token}`.') }, 'identity'), operationId: 'authSession', ...browser },
    },
    '/auth/workspace': {
      post: { ...open('Switch workspace', 'Your session moves to another of your workspaces: a new cookie (CSRF-checked).', { '200': json('`{workspace_id, session}`.'), '404': problemFor(404) }, 'identity'), operationId: 'authWorkspace', ...browser },
    },
    '/auth/logout': {
      post: { ...open('Sign out', 'Ends the cookie session on the server (CSRF-checked).', { '204': { description: 'Signed out.' }, '403': problemFor(403) }, 'identity'), operationId: 'authLogout', ...browser },
    },
  };
}

function metaPaths(): PathItems {
  return {
    [API_PREFIX]: {
      get: {
        ...open(
          'The capability manifest',
          'Compact for an agent token, full otherwise; `?view=compact|full` chooses (spec/api.md).',
          { '200': { ...json('The manifest, in the view asked for.', { oneOf: [schemaRef('ManifestCompact'), schemaRef('Manifest')] }), headers: RATE_HEADERS }, '400': problemFor(400), '401': problemFor(401) },
          'meta',
        ),
        operationId: 'manifest',
        parameters: [{ name: 'view', in: 'query', schema: { type: 'string', enum: ['compact', 'full'] } }],
      },
    },
    [`${API_PREFIX}/openapi.json`]: { get: { ...open('This OpenAPI document', 'Generated from the operation registry.', { '200': { ...json('OpenAPI 3.1.'), headers: RATE_HEADERS }, '401': problemFor(401) }, 'meta'), operationId: 'openapi' } },
    [`${API_PREFIX}/artifacts/{id}/content`]: {
      get: {
        ...withToken(
          "An artifact's bytes",
          "artifacts_get with its body (same scope and errors), where every artifact `href` points: as an attachment, with the stored content type and `ETag: \"<sha256>\"`.",
          {
            '200': { description: 'The bytes, with the stored content type.', content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } }, headers: { ...RATE_HEADERS, ETag: ref('ETag') } },
            '304': { description: 'Not modified (If-None-Match matched).' },
            '400': problemFor(400),
            '401': problemFor(401),
            '403': problemFor(403),
            '404': problemFor(404),
            '429': problemFor(429),
          },
          'artifacts',
        ),
        operationId: 'artifacts_content',
        parameters: [path('id'), { name: 'If-None-Match', in: 'header', schema: { type: 'string', maxLength: 100 }, description: 'The ETag you read; answers 304 when unchanged.' }],
      },
    },
    '/healthz': { get: { ...open('Liveness', 'The process answers, saying which release runs.', { '200': json('`{"status":"ok","version":"0.2.0"}`') }), operationId: 'healthz', security: [] } },
    '/readyz': { get: { ...open('Readiness', 'The database answers.', { '200': json('`{"status":"ready"}`'), '503': problemFor(503) }), operationId: 'readyz', security: [] } },
    '/metrics': {
      get: {
        ...withToken('Prometheus metrics', 'Text exposition format; a token with `metrics:read` (or `agents:admin`), or none on BATON_METRICS_ADDRESS.', {
          '200': { description: 'Metrics.', content: { 'text/plain': { schema: { type: 'string' } } } },
          '401': problemFor(401),
          '403': problemFor(403),
        }),
        operationId: 'metrics',
      },
    },
  };
}

function docsPaths(): PathItems {
  return {
    '/spec': { get: { ...open('The served spec', 'Redirects to /spec/index.md.', { '302': { description: 'To /spec/index.md.', headers: { Location: ref('Location') } } }, 'docs'), operationId: 'spec', security: [] } },
    '/spec/{page}': {
      get: { ...open('A spec page', 'One page of the specification, as Markdown (`index.md`, `api.md` …).', { '200': markdown('The page.'), '404': problemFor(404) }, 'docs'), operationId: 'specPage', security: [], parameters: [path('page')] },
    },
    '/errors/{code}': {
      get: {
        ...open('An error code', "The page a problem's `type` names: what the code means and what to do.", { '200': markdown('The page.'), '404': problemFor(404) }, 'docs'),
        operationId: 'errorPage',
        security: [],
        parameters: [path('code', schemaRef('ErrorCode'))],
      },
    },
  };
}

function protocolPaths(): PathItems {
  const graphqlAnswer = { '200': answer('GraphqlResponse'), '400': problemFor(400), '401': problemFor(401), '429': problemFor(429) };
  const mcpAnswer = (response: 'JsonRpcResponse' | 'JsonRpcAnswer') => ({ '200': answer(response), '400': problemFor(400), '401': problemFor(401), '403': problemFor(403), '429': problemFor(429) });
  const mcp = (summary: string, description: string, responses: Record<string, unknown>) => withToken(summary, description, responses, 'mcp');
  return {
    '/graphql': {
      get: {
        ...withToken('GraphQL over GET', 'Queries only (mutations need POST); a subscription with `Accept: text/event-stream` answers as server-sent events.', graphqlAnswer, 'graphql'),
        operationId: 'graphqlGet',
        parameters: [
          { name: 'query', in: 'query', required: true, schema: { type: 'string' } },
          { name: 'variables', in: 'query', schema: { type: 'string' }, description: 'JSON.' },
          { name: 'operationName', in: 'query', schema: { type: 'string' } },
        ],
      },
      post: {
        ...withToken('GraphQL', 'The registry as GraphQL (spec/graphql.md); errors carry the problem document in `extensions`.', graphqlAnswer, 'graphql'),
        operationId: 'graphql',
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['query'], properties: { query: { type: 'string' }, variables: { type: 'object' }, operationName: { type: 'string' } } } } } },
      },
      options: { ...open('GraphQL preflight', 'CORS preflight, answered by GraphQL Yoga.', { '204': { description: 'Allowed methods and headers.' } }, 'graphql'), operationId: 'graphqlOptions', security: [] },
    },
    '/mcp': {
      post: {
        ...mcp('MCP (Streamable HTTP)', 'JSON-RPC per the Model Context Protocol (spec/mcp.md); `?toolsets=work,tasks` (or all), `?schemas=strict`, `?output_schemas=1`.', mcpAnswer('JsonRpcResponse')),
        operationId: 'mcp',
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
      },
      get: { ...mcp('MCP stream', "The Streamable HTTP transport's GET, answered by the MCP SDK (a stateless server has no stream to open).", mcpAnswer('JsonRpcAnswer')), operationId: 'mcpGet' },
      delete: { ...mcp('MCP session end', "The Streamable HTTP transport's DELETE, answered by the MCP SDK.", mcpAnswer('JsonRpcAnswer')), operationId: 'mcpDelete' },
    },
    '/a2a': {
      post: {
        ...withToken('A2A (JSON-RPC)', 'The Agent2Agent protocol 1.0 over JSON-RPC, mapped onto Baton tasks (spec/a2a.md); streaming methods answer SSE.', { '200': answer('JsonRpcResponse'), '401': problemFor(401), '429': problemFor(429) }, 'a2a'),
        operationId: 'a2a',
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
      },
    },
    '/.well-known/agent-card.json': { get: { ...open('A2A Agent Card', 'Public: the A2A interface, its security scheme and skills (spec/a2a.md).', { '200': json('The Agent Card.') }, 'a2a'), operationId: 'agentCard', security: [] } },
  };
}

function inboundPaths(): PathItems {
  // GET is for schedulers that send only GET: the route is described once, on POST.
  const cron = (operationId: string, description: string) => ({
    ...open('Keep-alive cron', description, { '200': json('A report of what each loop did.'), '401': problemFor(401), '503': problemFor(503) }, 'inbound'),
    operationId,
    security: [{ cron: [] }],
  });
  return {
    '/webhooks/payments': { post: { ...open('Inbound payments webhook', 'Stripe-signed events (spec/inbound.md).', { '200': json('Recorded (or a duplicate).'), '400': problemFor(400), '503': problemFor(503) }, 'inbound'), operationId: 'inboundPayments', security: [] } },
    '/webhooks/auth': { post: { ...open('Inbound auth-provider webhook', 'Svix-signed events (spec/inbound.md).', { '200': json('Recorded (or a duplicate).'), '400': problemFor(400), '503': problemFor(503) }, 'inbound'), operationId: 'inboundAuth', security: [] } },
    '/cron/keepalive': {
      get: cron('cronKeepalive', 'As POST, for schedulers that send GET.'),
      post: cron('cronKeepalivePost', 'Bearer CRON_SECRET; runs one pass of every maintenance loop (spec/inbound.md).'),
    },
  };
}
