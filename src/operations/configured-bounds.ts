import { z } from 'zod';
import type { Config } from '../config.ts';

/**
 * Input bounds that are the server's configuration rather than constants (BATON_LEASE_TTL_*). An
 * input schema marks such a parameter with `configuredBound(…)`; every schema derived for a server
 * (OpenAPI, MCP tools, GraphQL) then carries that server's bounds and says its default, so what is
 * advertised is what the operation enforces.
 */
export type ConfiguredBound = 'lease_ttl';

/** The JSON Schema key that marks a configured parameter; adapters replace it with `boundsOf`. */
export const CONFIGURED_BOUND_KEY = 'x-baton-configured';

/** Zod metadata marking a parameter whose bounds come from the server's config. */
export function configuredBound(bound: ConfiguredBound): Record<string, unknown> {
  return { [CONFIGURED_BOUND_KEY]: bound };
}

interface Bounds {
  readonly minimum: number;
  readonly maximum: number;
  /** Says the default too: a schema `default` would make GraphQL send it, and a heartbeat without ttl_s keeps the lease's own. */
  readonly description: string;
}

const BOUNDS: Record<ConfiguredBound, (config: Config) => Bounds> = {
  lease_ttl: ({ leaseTtl: { defaultS, minS, maxS } }) => ({
    minimum: minS,
    maximum: maxS,
    description: `Seconds, ${minS}–${maxS} (claims: default ${defaultS}).`,
  }),
};

/** The JSON Schema members of a configured parameter on a server with this config. */
export function boundsOf(bound: ConfiguredBound, config: Config): Bounds {
  return BOUNDS[bound](config);
}

/**
 * The top-level inputs outside this server's configured bounds, each with what it must be: checked
 * with the input's validation, so one refusal names every bad field, before anything is read.
 */
export function outOfBounds(input: z.ZodObject, value: unknown, config: Config): { key: string; detail: string }[] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(input.shape as Record<string, z.ZodType>).flatMap(([key, schema]) => {
    const bound = boundMarkOf(schema);
    const given = (value as Record<string, unknown>)[key];
    if (bound === undefined || typeof given !== 'number') return [];
    const { minimum, maximum } = boundsOf(bound, config);
    return given < minimum || given > maximum ? [{ key, detail: `must be between ${minimum} and ${maximum}` }] : [];
  });
}

function boundMarkOf(schema: z.ZodType): ConfiguredBound | undefined {
  const inner = schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema;
  return inner.meta()?.[CONFIGURED_BOUND_KEY] as ConfiguredBound | undefined;
}
