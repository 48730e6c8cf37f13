import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ExecutionResult } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { BatonError, type ErrorCode } from '../../errors.ts';
import { authenticateRequest } from '../authenticate-request.ts';
import { sendProblem } from '../rest/problem.ts';
import type { JsonSchemas } from '../json-schema.ts';
import type { Service } from '../../service/service.ts';
import { graphqlDialect } from './dialect.ts';
import { type Problems, toGraphQLError } from './errors.ts';
import { type CountedOperations, operationCount, queryLimits } from './limits.ts';
import type { GraphqlContext } from './resolvers.ts';
import { buildGraphqlSchema } from './schema.ts';
import { traceOperations } from './trace-operations.ts';
import { v1ListVariables } from './v1-list-variables.ts';

export const GRAPHQL_PATH = '/graphql';

const HTTP_REFUSALS: Record<number, { code: ErrorCode; detail: string }> & { 400: { code: ErrorCode; detail: string } } = {
  400: { code: 'malformed_request', detail: 'The GraphQL request is not one this endpoint can read.' },
  405: { code: 'method_not_allowed', detail: 'This GraphQL operation cannot be sent with this HTTP method (mutations need POST).' },
  406: {
    code: 'not_acceptable',
    detail: 'A subscription answers as a stream of server-sent events: send `Accept: text/event-stream`.',
  },
};

interface ServerContext extends CountedOperations {
  req: FastifyRequest;
  reply: FastifyReply;
}

/**
 * Serves the registry as GraphQL at /graphql (GraphQL Yoga inside the Fastify app). Each HTTP
 * request authenticates once and counts against the token's rate budget once, or once per root field
 * of a mutation (all of them or none, before anything runs), and carries the same RateLimit headers
 * as REST; every error is a problem document in `extensions`.
 */
export function registerGraphql(app: FastifyInstance, service: Service, schemas: JsonSchemas): void {
  const log = (details: object, message: string) => app.log.error(details, message);
  const schema = buildGraphqlSchema(service.operations, schemas);
  const problems = { baseUrl: service.baseUrl, dialect: graphqlDialect(schema, service.operations) };
  const yoga = createYoga<ServerContext, GraphqlContext>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    graphiql: false,
    landingPage: false,
    logging: false,
    // Yoga's default CORS reflects any Origin with Allow-Credentials, which would let another site
    // on the same registrable domain read queries made with a person's session cookie. Other
    // origins may still call with a bearer token (spec/graphql.md, "Browsers").
    cors: { credentials: false },
    maskedErrors: { maskError: (error) => toGraphQLError(error, problems, log) },
    plugins: [queryLimits(), operationCount(), v1ListVariables(), problemsEverywhere(problems, log), ...traceOperations(service.tracing)],
    context: async ({ req, reply, operations }): Promise<GraphqlContext> => {
      const { principal, budget } = await authenticateRequest(service, req, reply, 'graphql', operations);
      return { service, call: { principal, budget, requestId: req.id, dialect: problems.dialect }, loaders: new Map(), idempotency: {}, pendingApprovals: new WeakSet() };
    },
  });

  app.route({
    url: GRAPHQL_PATH,
    method: ['GET', 'POST', 'OPTIONS'],
    handler: async (req, reply) => {
      const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply });
      // Yoga's own HTTP refusals (406 for a subscription the Accept header cannot carry) have no
      // body; like every other failure they are a problem document.
      if (response.status >= 400 && response.body === null) {
        const refusal = HTTP_REFUSALS[response.status] ?? HTTP_REFUSALS[400];
        if (response.headers.has('allow')) reply.header('allow', response.headers.get('allow'));
        return sendProblem(reply, new BatonError(refusal.code, refusal.detail), service, req.id);
      }
      for (const [name, value] of response.headers) reply.header(name, value);
      // A subscription's stream, as GET /api/v1/events/stream: nginx passes each frame on at once.
      if (response.headers.get('content-type')?.startsWith('text/event-stream')) reply.header('x-accel-buffering', 'no');
      return reply.code(response.status).send(response.body);
    },
  });
}

/**
 * Gives every error the problem shape (also those GraphQL raises before execution: syntax,
 * validation, limits), and reports each write's Idempotency-Key in `extensions.idempotency`.
 */
function problemsEverywhere(problems: Problems, log: (details: object, message: string) => void): Plugin<GraphqlContext> {
  return {
    onExecute({ args }) {
      return {
        onExecuteDone({ result, setResult }) {
          const keys = args.contextValue.idempotency;
          if (Object.keys(keys).length === 0 || Symbol.asyncIterator in result) return;
          setResult({ ...result, extensions: { ...result.extensions, idempotency: keys } });
        },
      };
    },
    onResultProcess(payload) {
      const { result } = payload;
      if (Array.isArray(result) || Symbol.asyncIterator in result) return;
      const single = result as ExecutionResult;
      if (!single.errors?.length) return;
      payload.setResult({ ...single, errors: single.errors.map((e) => toGraphQLError(e, problems, log)) });
    },
  };
}
