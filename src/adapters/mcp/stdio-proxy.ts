import { Client, type FetchLike, type McpSubscription, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { CLIENT_CAPABILITIES_META_KEY, type ClientCapabilities, isInputRequiredResult, ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { StdioConfig } from '../../config.ts';
import { takesFormElicitation } from './elicitation.ts';
import { MCP_PATH } from './http.ts';
import { BATON_VERSION } from '../../version.ts';

const IDENTITY = { name: 'baton', version: BATON_VERSION };

/** The members of the server's problem document a refusal is told by. */
interface Refusal {
  readonly code: string;
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly hint: string;
}

/**
 * `baton mcp`: an MCP server on this process's stdio that forwards every request to a Baton
 * server's /mcp with the bearer token. No tool logic lives here, so stdio clients get exactly
 * what Streamable HTTP clients get, and every call is authenticated, rate limited and logged by
 * the server. Resolves once connected to the server; stops when stdin closes.
 *
 * When the server refuses the token (401, 403), its problem (title, detail, hint) goes to stderr
 * and to the MCP client: the bridge still serves stdio, answering every request with that problem,
 * and the process exits 3 (the CLI's code for a refused token) when stdin closes. A server it cannot
 * reach is a `ServerUnreachable` naming the URL tried (the CLI exits 7).
 */
export async function serveStdioProxy(config: StdioConfig): Promise<void> {
  const endpoint = new URL(config.api === 'v2' ? `${MCP_PATH}?api=v2` : MCP_PATH, config.url);
  let refusal: Refusal | undefined;
  const remoteFetch: FetchLike = async (url, init) => {
    const response = await fetch(url, init).catch((error: unknown) => {
      throw new ServerUnreachable(`cannot reach the Baton server at ${endpoint.href} (${reasonOf(error)}); is it running? Check BATON_URL.`);
    });
    if (response.status === 401 || response.status === 403) refusal = await refusalOf(response.clone());
    return response;
  };
  const remote = new Client({ name: 'baton-mcp-stdio', version: IDENTITY.version }, { versionNegotiation: { mode: 'auto' } });
  try {
    await remote.connect(
      new StreamableHTTPClientTransport(endpoint, { fetch: remoteFetch, requestInit: { headers: { authorization: `Bearer ${config.token}` } } }),
    );
  } catch (error) {
    if (!refusal) throw error instanceof Error && error.cause instanceof ServerUnreachable ? error.cause : error;
    serveRefusal(refusal, endpoint);
    return;
  }
  // A refusal later on (the token revoked meanwhile) reaches the client as that problem, not a bare HTTP error.
  const forward =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      refusal = undefined;
      try {
        return await call(...args);
      } catch (error) {
        if (refusal) throw refusalError(refusal, endpoint);
        throw error;
      }
    };
  // The Tasks extension is the server's over HTTP, not the bridge's: it relays no tasks/* method (spec/mcp.md § MCP Tasks).
  const { extensions: _served, ...capabilities } = remote.getServerCapabilities() ?? {};
  const subscriptions = resourceSubscriptions(remote);
  const handle = serveStdio((ctx) => {
    // A 2025-era stdio session is stateful, so it gets resources/subscribe (relayed from the server's
    // listen stream); a 2026-era client's listen filter is answered by the SDK's entry, unseen here.
    const legacy = ctx.era === 'legacy';
    const resources = { ...capabilities.resources, subscribe: legacy };
    const server = new Server(remote.getServerVersion() ?? IDENTITY, { capabilities: { ...capabilities, resources }, instructions: remote.getInstructions() });
    if (legacy) {
      subscriptions.deliverTo((uri) => void server.sendResourceUpdated({ uri }));
      server.setRequestHandler('resources/subscribe', forward(async (request) => subscriptions.add(request.params.uri)));
      server.setRequestHandler('resources/unsubscribe', forward(async (request) => subscriptions.remove(request.params.uri)));
    }
    server.setRequestHandler('tools/list', forward((request) => remote.listTools(request.params)));
    // Results are already shaped (structuredContent objects) by the server; projection only adapts the era.
    // Elicitation is relayed (spec/mcp.md § Elicitation): the server asks only what this host declared it
    // takes, its question comes back to the host as the host's own era asks (the SDK sends a 2025 host
    // elicitation/create), and the answers go to the server with the retried call.
    server.setRequestHandler(
      'tools/call',
      forward(async (request, ctx) => {
        // A 2026-07-28 host declares its capabilities on each request; a 2025 host once, at initialize.
        const envelope = ctx.mcpReq.envelope as Readonly<Record<string, ClientCapabilities | undefined>> | undefined;
        const elicits = takesFormElicitation(envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? server.getClientCapabilities());
        const state = ctx.mcpReq.requestState<string>();
        const params = {
          ...request.params,
          ...(elicits ? { _meta: { ...request.params._meta, [CLIENT_CAPABILITIES_META_KEY]: { elicitation: { form: {} } } } } : {}),
          ...(ctx.mcpReq.inputResponses ? { inputResponses: ctx.mcpReq.inputResponses } : {}),
          ...(state === undefined ? {} : { requestState: state }),
        };
        const result = await remote.callTool(params, { allowInputRequired: true });
        return isInputRequiredResult(result) ? result : server.projectCallToolResult(result, undefined);
      }),
    );
    server.setRequestHandler('resources/list', forward((request) => remote.listResources(request.params)));
    server.setRequestHandler('resources/templates/list', forward((request) => remote.listResourceTemplates(request.params)));
    server.setRequestHandler('resources/read', forward((request) => remote.readResource(request.params)));
    server.setRequestHandler('prompts/list', forward((request) => remote.listPrompts(request.params)));
    server.setRequestHandler('prompts/get', forward((request) => remote.getPrompt(request.params)));
    return server;
  });
  process.stdin.once('end', () => void Promise.all([handle.close(), subscriptions.close(), remote.close()]));
}

/**
 * The stdio client's resource subscriptions, relayed from one `subscriptions/listen` stream on the
 * server whose filter is the set subscribed to now (reopened, new before old, when it changes).
 */
function resourceSubscriptions(remote: Client) {
  const uris = new Set<string>();
  let listening: McpSubscription | undefined;
  let deliver: (uri: string) => void = () => undefined;
  remote.setNotificationHandler('notifications/resources/updated', (notification) => {
    if (uris.has(notification.params.uri)) deliver(notification.params.uri);
  });
  const relisten = async () => {
    const previous = listening;
    listening = uris.size === 0 ? undefined : await remote.listen({ resourceSubscriptions: [...uris] });
    const current = listening;
    // The server went away (a restart): listen again, so updates keep coming.
    void current?.closed.then((reason) => (reason === 'remote' && listening === current ? relisten() : undefined)).catch(() => undefined);
    await previous?.close();
  };
  return {
    deliverTo(callback: (uri: string) => void) {
      deliver = callback;
    },
    async add(uri: string) {
      if (!uris.has(uri)) {
        uris.add(uri);
        await relisten();
      }
      return {};
    },
    async remove(uri: string) {
      if (uris.delete(uri)) await relisten();
      return {};
    },
    close: () => listening?.close(),
  };
}

/** The Baton server did not answer at all (refused, unknown host, reset). */
export class ServerUnreachable extends Error {
  override name = 'ServerUnreachable';
}

/** What the process exits with after serving a refusal: the CLI's code for a refused token (README, "Exit codes"). */
const REFUSED_TOKEN_EXIT = 3;

/**
 * Serves stdio for a refused token: the client connects (so its host can show why), its
 * instructions and every tools or resources request carry the server's problem, and the process
 * exits 3 when stdin closes.
 */
function serveRefusal(refusal: Refusal, endpoint: URL): void {
  process.stderr.write(`error: ${sentence(refusal, endpoint)}\n`);
  process.exitCode = REFUSED_TOKEN_EXIT;
  const handle = serveStdio(() => {
    const server = new Server(IDENTITY, { capabilities: { tools: {}, resources: {}, prompts: {} }, instructions: sentence(refusal, endpoint) });
    const refuse = () => Promise.reject(refusalError(refusal, endpoint));
    for (const method of ['tools/list', 'tools/call', 'resources/list', 'resources/templates/list', 'resources/read', 'prompts/list', 'prompts/get'] as const) {
      server.setRequestHandler(method, refuse);
    }
    return server;
  });
  process.stdin.once('end', () => void handle.close());
}

function sentence(refusal: Refusal, endpoint: URL): string {
  return `the Baton server at ${endpoint.href} refused the token: ${refusal.title} (${refusal.code}, HTTP ${refusal.status}). ${refusal.detail} Hint: ${refusal.hint}`;
}

/** The refusal as the MCP client sees it: a JSON-RPC error with the problem's words, and the problem as its data. */
function refusalError(refusal: Refusal, endpoint: URL): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidRequest, sentence(refusal, endpoint), refusal);
}

/** The server's problem document, or what the response said when it sent none. */
async function refusalOf(response: Response): Promise<Refusal> {
  const text = await response.text();
  try {
    const problem = JSON.parse(text) as Partial<Refusal>;
    if (typeof problem.code === 'string' && typeof problem.detail === 'string') {
      return { code: problem.code, status: response.status, title: problem.title ?? '', detail: problem.detail, hint: problem.hint ?? '' };
    }
  } catch {
    // not a problem document: described below
  }
  return { code: `http_${response.status}`, status: response.status, title: response.statusText, detail: text.slice(0, 200), hint: 'Check BATON_TOKEN.' };
}

function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  return error instanceof Error ? error.message : String(error);
}
