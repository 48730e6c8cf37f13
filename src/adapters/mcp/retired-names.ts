import type { CallToolResult } from '@modelcontextprotocol/server';
import { BatonError, toProblem } from '../../errors.ts';
import { operationKey } from '../../operations/authorization.ts';
import { MCP_DIALECT } from './dialect.ts';

/**
 * Tool names were dotted before 0.2 (`tasks.get`, `tasks.claim_next`). A call by such a name is not a
 * bare "unknown tool": it answers a tool error (`tool_renamed`) naming the tool to call now, so an
 * agent configured with the old names can correct itself. Undefined for any other unknown name.
 */
export function retiredNameResult(name: string, tools: ReadonlyMap<string, unknown>, baseUrl: string): CallToolResult | undefined {
  const current = operationKey(name);
  if (current === name || !tools.has(current)) return undefined;
  const error = new BatonError('tool_renamed', `The tool ${name} is now called ${current}.`, { extra: { renamed_to: current } });
  return { content: [{ type: 'text', text: JSON.stringify(toProblem(error, baseUrl, MCP_DIALECT)) }], isError: true };
}
