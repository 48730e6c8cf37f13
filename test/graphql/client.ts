import type { TestServer } from '../harness.ts';

/** A GraphQL response as a client sees it. */
export interface GraphqlResponse<T = Record<string, unknown>> {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions: Record<string, unknown> & { code: string; status: number } }[];
  extensions?: Record<string, unknown>;
}

/** POSTs a GraphQL request to /graphql in process, as the admin unless `token` says otherwise (null: no token). */
export async function graphql<T = Record<string, unknown>>(
  t: TestServer,
  query: string,
  options: { variables?: Record<string, unknown>; token?: string | null } = {},
): Promise<GraphqlResponse<T>> {
  const token = options.token === undefined ? t.adminToken : options.token;
  const res = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    payload: JSON.stringify({ query, variables: options.variables ?? {} }),
  });
  return { status: res.statusCode, headers: res.headers, ...(JSON.parse(res.body) as object) };
}
