/** Baton's release, as package.json gives it; servers name themselves with it (MCP `serverInfo`). src/version.test.ts holds the two equal. */
export const BATON_VERSION = '0.2.0';
