/**
 * The REST API's versions, each a path of its own (the seed spec's versioning rule: `v1` is never
 * changed in place). `v2` is `v1` with leaner task answers: its default views leave out what says
 * nothing, and `next_actions` name the operation instead of spelling the request (spec/api.md,
 * "Versions").
 */
export const API_VERSIONS = [1, 2] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];

/** Where a version's routes live: `/api/v1`, `/api/v2`. */
export function apiPrefix(version: ApiVersion): string {
  return `/api/v${version}`;
}

/** The version a request path is in: `/api/v2/…` is 2; anything else (v1, and the routes outside the API) 1. */
export function versionOfPath(path: string): ApiVersion {
  return path === '/api/v2' || path.startsWith('/api/v2/') || path.startsWith('/api/v2?') ? 2 : 1;
}
