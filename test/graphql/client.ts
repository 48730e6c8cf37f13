import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { TestServer } from '../harness.ts';

/** A GraphQL response as a client sees it. */
export interface GraphqlResponse<T = Record<string, unknown>> {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions: Record<string, unknown> & { code: string; status: number } }[];
  extensions?: Record<string, unknown>;
}

/**
 * POSTs a GraphQL request to /graphql in process, as the admin unless `token` says otherwise (null: no
 * token), accepting `application/graphql-response+json` unless `accept` says otherwise.
 */
export async function graphql<T = Record<string, unknown>>(
  t: TestServer,
  query: string,
  options: { variables?: Record<string, unknown>; token?: string | null; accept?: string } = {},
): Promise<GraphqlResponse<T>> {
  const token = options.token === undefined ? t.adminToken : options.token;
  const res = await t.app.inject({
    method: 'POST',
    url: '/graphql',
    headers: { 'content-type': 'application/json', accept: options.accept ?? 'application/graphql-response+json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    payload: JSON.stringify({ query, variables: options.variables ?? {} }),
  });
  return { status: res.statusCode, headers: res.headers, ...(JSON.parse(res.body) as object) };
}

/** Opens a GraphQL subscription over SSE (the "distinct connections" mode) and reads its frames. */
export async function subscribeGraphql(base: string, query: string, token: string) {
  const controller = new AbortController();
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query }),
    signal: controller.signal,
  });
  if (!res.body) throw new Error('no body');
  const frames = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    headers: res.headers,
    /** The next frame's JSON payload. */
    async next<T>(): Promise<T> {
      const { value, done } = await frames.read();
      if (done) throw new Error('the subscription ended');
      return JSON.parse(value.data) as T;
    },
    close: () => controller.abort(),
  };
}
