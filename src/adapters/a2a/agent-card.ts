import { A2A_PROTOCOL_VERSION, AgentCard } from '@a2a-js/sdk';
import { BATON_VERSION } from '../../version.ts';

/** Where the A2A JSON-RPC binding is served (the card's `supportedInterfaces` names it). */
export const A2A_PATH = '/a2a';
/** The security scheme every A2A request must satisfy: Baton's own bearer token. */
const BEARER = 'baton_token';

/**
 * Baton's Agent Card: one JSON-RPC interface at {@link A2A_PATH} on A2A 1.0, streaming, no push
 * notifications, and Baton's bearer token as the one security scheme. Built from the protocol's
 * JSON with the SDK's codec, so it is served exactly as the SDK's clients parse it.
 */
export function buildAgentCard(baseUrl: string): AgentCard {
  return AgentCard.fromJSON({
    name: 'Baton',
    description:
      'Task coordination for humans and agents. Send a message: it becomes a Baton task (first line the title, the rest its description) that Baton\'s agents and people claim, work and review. Follow it with GetTask or a stream; when it is done, its hand-in summary and artifacts are the result.',
    supportedInterfaces: [{ url: `${baseUrl}${A2A_PATH}`, protocolBinding: 'JSONRPC', protocolVersion: A2A_PROTOCOL_VERSION }],
    provider: { organization: 'Baton', url: baseUrl },
    version: BATON_VERSION,
    documentationUrl: `${baseUrl}/spec/a2a.md`,
    capabilities: { streaming: true, pushNotifications: false },
    securitySchemes: { [BEARER]: { httpAuthSecurityScheme: { scheme: 'Bearer', description: 'A Baton API token (the same token REST and MCP take).' } } },
    securityRequirements: [{ schemes: { [BEARER]: { list: [] } } }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/octet-stream'],
    skills: [
      {
        id: 'baton-task',
        name: 'Hand Baton a task',
        description: 'Creates a Baton task from the message and reports its progress until done, cancelled or failed.',
        tags: ['tasks', 'coordination', 'review'],
        examples: ['Fix the flaky login test\nIt fails one run in ten on CI since Tuesday.'],
      },
    ],
  });
}
