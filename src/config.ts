import { z } from 'zod';
import { ConfigError } from './startup-error.ts';
import { ROLES, type Role } from './domain/roles.ts';
import { parsePostgresHosts, type PostgresHosts } from './postgres-hosts.ts';
import { parsePrivateAllowance, type PrivateAllowance } from './private-allowance.ts';
import { isWellFormedToken } from './tokens.ts';

export { ConfigError } from './startup-error.ts';


/** Attempts one webhook delivery may make: a delivery lists them all, so the list is bounded. */
export const DELIVERY_ATTEMPTS_MAX = 20;
const port = z.coerce.number().int().min(0).max(65535);
const seconds = z.coerce.number().int().positive();
/** The OTLP transports Baton's exporter speaks; `grpc` would need another dependency. */
const otlpProtocol = z.enum(['http/protobuf', 'http/json'], 'must be http/protobuf or http/json (Baton does not export over grpc)');
/** W3C Baggage-style `key=value,key2=value2`, values percent-encoded, as OTEL_* header and resource lists are written. */
const keyValueList = z.string().regex(/^\s*[^=,\s]+\s*=[^,]*(,\s*[^=,\s]+\s*=[^,]*)*$/, 'must be key=value pairs separated by commas');
const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

/** What the OTLP trace export is told (from the OTEL_* variables); `Config.tracing` is undefined when tracing is off. */
export interface TracingConfig {
  readonly serviceName: string;
  /** The full URL spans are POSTed to (…/v1/traces). */
  readonly url: string;
  readonly protocol: z.infer<typeof otlpProtocol>;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly sampler: (typeof TRACE_SAMPLERS)[number];
  /** The ratio of the `*traceidratio` samplers (1 when unset). */
  readonly samplerRatio: number;
  readonly resourceAttributes: Readonly<Record<string, string>>;
}

/** A PostgreSQL URL, one host or several as libpq lists them (docs/operations.md). */
const postgresUrl = z
  .string()
  .superRefine((url, ctx) => {
    const scheme = url.split(':')[0] ?? '';
    if (!/^postgres(ql)?$/i.test(scheme)) {
      ctx.addIssue({ code: 'custom', message: `must be a PostgreSQL URL (postgres://…), not ${scheme}://; Baton keeps its data only in PostgreSQL, or unset DATABASE_URL for the embedded database` });
      return;
    }
    // Several hosts, as libpq lists them, are one URL each once split (docs/operations.md).
    let hosts: PostgresHosts;
    try {
      hosts = parsePostgresHosts(url);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return;
    }
    if (!hosts.urls.every((each) => URL.canParse(each))) ctx.addIssue({ code: 'custom', message: 'Invalid URL' });
  });

const schema = z.object({
  PORT: port.default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: postgresUrl.optional(),
  BATON_DATABASE_REPLICA_URL: postgresUrl.optional(),
  BATON_DATABASE_LISTEN_URL: postgresUrl.optional(),
  BATON_DATABASE_REPLICA_MAX_LAG_S: z.coerce.number().int().min(0).max(3600).default(10),
  BATON_DATA_DIR: z.string().min(1).default('.baton/data'),
  BATON_PUBLIC_URL: z.url().optional(),
  BATON_BOOTSTRAP_TOKEN: z
    .string()
    .refine(isWellFormedToken, 'must be a Baton token (bat_ + 30 base62 characters + a 6-character checksum); make one with `npx baton-tasks token`')
    .optional(),
  BATON_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BATON_DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  BATON_DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  BATON_DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
  BATON_DB_LOCK_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  BATON_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(60_000),
  BATON_DB_PREPARED_STATEMENTS: z.enum(['on', 'off']).default('on'),
  BATON_BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024),
  BATON_IDEMPOTENCY_TTL_S: seconds.default(24 * 3600),
  BATON_RATE_LIMIT: z
    .string()
    .regex(/^\d+\/\d+s$/, 'must be <requests>/<seconds>s')
    .default('600/60s'),
  BATON_LEASE_TTL_DEFAULT_S: seconds.default(300),
  BATON_LEASE_TTL_MIN_S: seconds.default(30),
  BATON_LEASE_TTL_MAX_S: seconds.default(3600),
  BATON_SWEEP_INTERVAL_MS: z.coerce.number().int().min(0).default(1000),
  BATON_ARTIFACT_MAX_BYTES: z.coerce.number().int().min(1024).max(1024 * 1024 * 1024).default(25 * 1024 * 1024),
  BATON_UPLOADS_PER_INSTANCE: z.coerce.number().int().min(1).max(1000).default(2),
  BATON_UPLOADS_PER_TOKEN: z.coerce.number().int().min(1).max(1000).default(1),
  STRIPE_WEBHOOK_SECRET: z.string().optional(),
  AUTH_WEBHOOK_SECRET: z
    .string()
    .regex(/^(whsec_)?[A-Za-z0-9+/]+={0,2}$/, 'must be a Svix signing secret: whsec_ followed by base64')
    .optional(),
  CRON_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  BATON_METRICS_ADDRESS: z
    .string()
    .regex(/^(\[[0-9a-fA-F:]+\]|[^:\s]+):\d{1,5}$/, 'must be <host>:<port>, e.g. 127.0.0.1:9464')
    .transform((a, ctx) => {
      const at = a.lastIndexOf(':');
      const port = Number(a.slice(at + 1));
      if (port > 65535) ctx.addIssue({ code: 'custom', message: 'the port must be at most 65535' });
      return { host: a.slice(0, at).replace(/^\[|\]$/g, ''), port };
    })
    .optional(),
  BATON_SECRET_KEY: z.string().min(32, 'must be at least 32 characters (e.g. 32 random bytes as hex)').optional(),
  BATON_WEBHOOK_ALLOW_PRIVATE: z
    .string()
    .default('0')
    .transform((raw, ctx) => {
      try {
        return parsePrivateAllowance(raw);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  BATON_WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .regex(/^\d+(,\d+)*$/, 'must be comma-separated seconds, the first attempt first')
    .refine((s) => s.split(',').length <= DELIVERY_ATTEMPTS_MAX, `at most ${DELIVERY_ATTEMPTS_MAX} attempts`)
    .default('0,5,300,1800,7200,18000,36000,36000'),
  BATON_WEBHOOK_INTERVAL_MS: z.coerce.number().int().min(0).default(1000),
  // Days a finished webhook delivery (delivered or failed) stays in the delivery log; unset: for ever.
  BATON_WEBHOOK_DELIVERY_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).optional(),
  BATON_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(3),
  BATON_RETRY_BACKOFF_S: z
    .string()
    .regex(/^\d+(,\d+)*$/, 'must be comma-separated seconds: the wait after the first failed attempt, the second, …')
    .default('30,300,1800'),
  BATON_SEPARATION_OF_DUTIES: z.enum(['on', 'off']).default('on'),
  // OpenTelemetry's standard variables (opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables).
  OTEL_SDK_DISABLED: z.enum(['true', 'false', 'TRUE', 'FALSE', 'True', 'False']).optional(),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none'], "must be otlp or none: Baton exports traces only over OTLP").optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
  OTEL_EXPORTER_OTLP_HEADERS: keyValueList.optional(),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: keyValueList.optional(),
  OTEL_EXPORTER_OTLP_TIMEOUT: z.coerce.number().int().positive().optional(),
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: z.coerce.number().int().positive().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default('baton'),
  OTEL_RESOURCE_ATTRIBUTES: keyValueList.optional(),
  OTEL_TRACES_SAMPLER: z
    .enum(TRACE_SAMPLERS, `must be one of ${TRACE_SAMPLERS.join(', ')}`)
    .default('parentbased_always_on'),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(),
  BATON_OIDC_ISSUER: z.url().optional(),
  BATON_OIDC_CLIENT_ID: z.string().min(1).optional(),
  BATON_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  BATON_OIDC_NAME: z.string().trim().min(1).max(40).default('single sign-on'),
  BATON_OIDC_ROLE_CLAIM: z.string().min(1).default('groups'),
  BATON_OIDC_ROLE_MAP: z
    .string()
    .regex(/^[^=,]+=(owner|admin|member|viewer)(,[^=,]+=(owner|admin|member|viewer))*$/, 'must be comma-separated <claim value>=<role>, roles owner, admin, member or viewer')
    .optional(),
  BATON_OIDC_DEFAULT_ROLE: z.enum(ROLES).default('member'),
  BATON_OIDC_REQUIRED: z.enum(['0', '1']).default('0'),
  BATON_SESSION_IDLE_TIMEOUT_S: seconds.default(8 * 3600),
  BATON_SESSION_ABSOLUTE_TIMEOUT_S: seconds.default(7 * 24 * 3600),
  BATON_SMTP_URL: z
    .url()
    .refine((u) => /^smtps?:\/\//i.test(u), 'must be smtp://user:pass@host:port (STARTTLS when offered) or smtps://… (TLS from the start)')
    .optional(),
  BATON_SMTP_FROM: z.string().min(3).default('Baton <baton@localhost>'),
  BATON_CHAT_WEBHOOK_URL: z.url().refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL').optional(),
  BATON_NOTIFY_DIGEST_S: seconds.default(3600),
  BATON_NOTIFY_LINK_TTL_S: seconds.default(7 * 24 * 3600),
  // How long an ask, an approval or a review may wait before it escalates; 0 (the default): never.
  BATON_ESCALATE_ASK_S: z.coerce.number().int().min(0).default(0),
  BATON_ESCALATE_APPROVAL_S: z.coerce.number().int().min(0).default(0),
  BATON_ESCALATE_REVIEW_S: z.coerce.number().int().min(0).default(0),
  BATON_ESCALATE_TO: z
    .string()
    .regex(/^[^,\s]+(,[^,\s]+)*$/, 'must be comma-separated principal names or ids, or role:<owner|admin|member|viewer>')
    .refine((s) => s.split(',').every((t) => !t.startsWith('role:') || (ROLES as readonly string[]).includes(t.slice(5))), 'a role must be role:owner, role:admin, role:member or role:viewer')
    .default('role:owner,role:admin'),
  // Days a workspace keeps its events when it sets none (workspaces_update); unset: for ever.
  BATON_EVENT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).optional(),
});

type Env = z.infer<typeof schema>;

/** The parsed, frozen configuration. Nothing outside this file reads `process.env`. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string | undefined;
  /**
   * A streaming standby of DATABASE_URL's primary for reads that may be stale (spec/api.md,
   * "Reads from a replica"), and the replay lag past which they go to the primary instead.
   * Undefined unless BATON_DATABASE_REPLICA_URL is set (PostgreSQL only).
   */
  readonly readReplica: { readonly url: string; readonly maxLagS: number } | undefined;
  /**
   * Where LISTEN connects when DATABASE_URL goes through a pooler that keeps no sessions (PgBouncer
   * in transaction mode): the same database, reached directly. Undefined: LISTEN uses DATABASE_URL.
   */
  readonly listenUrl: string | undefined;
  readonly dataDir: string;
  /** Absolute base for links (problem types, docs); BATON_PUBLIC_URL or http://<host>:<port>. */
  readonly publicUrl: string;
  readonly bootstrapToken: string | undefined;
  readonly logLevel: Env['BATON_LOG_LEVEL'];
  readonly dbPoolSize: number;
  /** PostgreSQL only: how long to wait for a connection, a statement, a lock, and an idle transaction before giving up. */
  readonly dbTimeouts: { readonly connectMs: number; readonly statementMs: number; readonly lockMs: number; readonly idleInTransactionMs: number };
  /** PostgreSQL only: named prepared statements (off behind PgBouncer in transaction mode). */
  readonly dbPreparedStatements: boolean;
  readonly bodyLimitBytes: number;
  readonly idempotencyTtlS: number;
  /** Requests per token per window, unless the agent has its own limit; windows are fixed and shared by all instances. */
  readonly rateLimit: { readonly limit: number; readonly windowS: number };
  readonly leaseTtl: { readonly defaultS: number; readonly minS: number; readonly maxS: number };
  /** How often each instance sweeps expired leases; 0 turns the in-process sweeper off (cron drives it). */
  readonly sweepIntervalMs: number;
  /** The largest artifact accepted, in bytes (decoded); past it 413. */
  readonly artifactMaxBytes: number;
  /**
   * Artifact uploads (bodies past `bodyLimitBytes`) one instance reads at once, and one token sends at
   * once: each may hold ~5 copies of its body in memory, so these bound the memory uploads take.
   */
  readonly uploads: { readonly perInstance: number; readonly perToken: number };
  /** Signing secret of the payment provider's webhook (`whsec_…`); unset: /webhooks/payments answers 503. */
  readonly stripeWebhookSecret: string | undefined;
  /** Svix signing secret of the auth provider's webhook (`whsec_…`); unset: /webhooks/auth answers 503. */
  readonly authWebhookSecret: string | undefined;
  /** Bearer secret of /cron/keepalive; unset: the route answers 503. */
  readonly cronSecret: string | undefined;
  /** Where /metrics is also served, without a token (BATON_METRICS_ADDRESS); on the API's address it needs `metrics:read`. */
  readonly metricsAddress: { readonly host: string; readonly port: number } | undefined;
  /** Derives webhook signing secrets (`derived:v1`); embedded mode makes one in the data dir when unset. */
  readonly secretKey: string | undefined;
  /** Which loopback, private and link-local addresses webhooks and chat channels may reach: all, none, or listed networks and host names. */
  readonly webhookAllowPrivate: PrivateAllowance;
  /** Delay before each attempt of a delivery, in ms, from the first; its length is the number of attempts. */
  readonly webhookRetryScheduleMs: readonly number[];
  /** How often each instance looks for due deliveries (new events also wake it); 0 turns delivery off here. */
  readonly webhookIntervalMs: number;
  /** Attempts a task gets before it leaves the queue (a task's own max_attempts wins). */
  readonly maxAttempts: number;
  /** Seconds a task waits after its 1st, 2nd, … failed attempt; the last entry repeats. */
  readonly retryBackoffS: readonly number[];
  /** Whoever handed a task in (or held the lease it was handed in from) may not approve it (spec/collaboration.md, "Review with feedback"). */
  readonly separationOfDuties: boolean;
  /** OpenTelemetry trace export; undefined (the default) turns tracing off, and the SDK is not even loaded. */
  readonly tracing: TracingConfig | undefined;
  /** Single sign-on for humans (spec/identity.md); undefined unless BATON_OIDC_ISSUER is set. */
  readonly oidc: OidcConfig | undefined;
  /** Cookie sessions of the web app: idle and absolute timeouts. */
  readonly session: { readonly idleS: number; readonly absoluteS: number };
  /** Email and chat notifications (spec/notifications.md); a channel without its URL is not sent. */
  readonly notify: NotifyConfig;
  /** Escalation and SLAs (spec/asks.md): the default of each workspace that sets none. */
  readonly escalation: EscalationConfig;
  /** Days events are kept in a workspace that sets none (spec/identity.md "Retention"); undefined: for ever. */
  readonly eventRetentionDays: number | undefined;
  /** Days a finished webhook delivery stays in the delivery log (spec/realtime.md "The delivery log"); undefined: for ever. */
  readonly webhookDeliveryRetentionDays: number | undefined;
}

export interface EscalationConfig {
  /** Seconds an open ask, a pending approval, a task in review may wait before it escalates; 0: never. */
  readonly askS: number;
  readonly approvalS: number;
  readonly reviewS: number;
  /** Who is notified: principal names or ids, and `role:<role>` (every enabled human with it). */
  readonly to: readonly string[];
}

export interface NotifyConfig {
  /** smtp(s)://user:pass@host:port; unset: no email. */
  readonly smtpUrl: string | undefined;
  readonly smtpFrom: string;
  /** A Slack-compatible incoming webhook (Mattermost, Rocket.Chat take the same body); unset: no chat. */
  readonly chatWebhookUrl: string | undefined;
  /** A digest goes out once its oldest item is this old. */
  readonly digestS: number;
  /** How long a link in a notification works. */
  readonly linkTtlS: number;
}

export interface OidcConfig {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The provider's name on the sign-in page ("Sign in with <name>"). */
  readonly name: string;
  /** The ID token claim (a string or a list of strings) that `roleMap` reads. */
  readonly roleClaim: string;
  /** Claim value → role, for a person's first sign-in; the first match in this order wins. */
  readonly roleMap: readonly (readonly [string, Role])[];
  readonly defaultRole: Role;
  /** Humans sign in only through the provider: their bearer tokens are refused (bar the system's bootstrap and recovery tokens). */
  readonly required: boolean;
}

/** Example values printed beside a config error, so the fix is one copy away. */
const EXAMPLES: Record<keyof Env, string> = {
  PORT: '3000',
  HOST: '0.0.0.0',
  DATABASE_URL: 'postgres://baton@127.0.0.1:5432/baton',
  BATON_DATABASE_REPLICA_URL: 'postgres://baton@db-standby:5432/baton',
  BATON_DATABASE_LISTEN_URL: 'postgres://baton@db1:5432/baton',
  BATON_DATABASE_REPLICA_MAX_LAG_S: '10',
  BATON_DATA_DIR: '.baton/data',
  BATON_PUBLIC_URL: 'https://baton.example.com',
  BATON_BOOTSTRAP_TOKEN: 'the output of `npx baton-tasks token`',
  BATON_LOG_LEVEL: 'info',
  BATON_DB_POOL_SIZE: '10',
  BATON_DB_CONNECT_TIMEOUT_MS: '5000',
  BATON_DB_STATEMENT_TIMEOUT_MS: '15000',
  BATON_DB_LOCK_TIMEOUT_MS: '5000',
  BATON_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '60000',
  BATON_DB_PREPARED_STATEMENTS: 'off',
  BATON_BODY_LIMIT_BYTES: '1048576',
  BATON_IDEMPOTENCY_TTL_S: '86400',
  BATON_RATE_LIMIT: '600/60s',
  BATON_LEASE_TTL_DEFAULT_S: '300',
  BATON_LEASE_TTL_MIN_S: '30',
  BATON_LEASE_TTL_MAX_S: '3600',
  BATON_SWEEP_INTERVAL_MS: '1000',
  BATON_ARTIFACT_MAX_BYTES: '26214400',
  BATON_UPLOADS_PER_INSTANCE: '2',
  BATON_UPLOADS_PER_TOKEN: '1',
  STRIPE_WEBHOOK_SECRET: 'whsec_… from the Stripe dashboard',
  AUTH_WEBHOOK_SECRET: 'whsec_… from the auth provider (Svix)',
  CRON_SECRET: 'the output of `openssl rand -hex 32`',
  BATON_METRICS_ADDRESS: '127.0.0.1:9464',
  BATON_SECRET_KEY: 'the output of `openssl rand -hex 32`',
  BATON_WEBHOOK_ALLOW_PRIVATE: '10.0.0.0/8,hooks.internal',
  BATON_WEBHOOK_RETRY_SCHEDULE: '0,5,300,1800,7200,18000,36000,36000',
  BATON_WEBHOOK_DELIVERY_RETENTION_DAYS: '30',
  BATON_WEBHOOK_INTERVAL_MS: '1000',
  BATON_MAX_ATTEMPTS: '3',
  BATON_RETRY_BACKOFF_S: '30,300,1800',
  BATON_SEPARATION_OF_DUTIES: 'off',
  OTEL_SDK_DISABLED: 'true',
  OTEL_TRACES_EXPORTER: 'otlp',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces',
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
  OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc',
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-api-key=abc',
  OTEL_EXPORTER_OTLP_TIMEOUT: '10000',
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '10000',
  OTEL_SERVICE_NAME: 'baton',
  OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=production',
  OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
  OTEL_TRACES_SAMPLER_ARG: '0.1',
  BATON_OIDC_ISSUER: 'https://login.example.com/realms/acme',
  BATON_OIDC_CLIENT_ID: 'baton',
  BATON_OIDC_CLIENT_SECRET: 'the client secret the provider shows',
  BATON_OIDC_NAME: 'Okta',
  BATON_OIDC_ROLE_CLAIM: 'groups',
  BATON_OIDC_ROLE_MAP: 'baton-admins=admin,baton-viewers=viewer',
  BATON_OIDC_DEFAULT_ROLE: 'member',
  BATON_OIDC_REQUIRED: '1',
  BATON_SESSION_IDLE_TIMEOUT_S: '28800',
  BATON_SESSION_ABSOLUTE_TIMEOUT_S: '604800',
  BATON_SMTP_URL: 'smtps://baton:app-password@smtp.example.com:465',
  BATON_SMTP_FROM: 'Baton <baton@example.com>',
  BATON_CHAT_WEBHOOK_URL: 'https://hooks.slack.com/services/T000/B000/XXXX',
  BATON_NOTIFY_DIGEST_S: '3600',
  BATON_NOTIFY_LINK_TTL_S: '604800',
  BATON_ESCALATE_ASK_S: '86400',
  BATON_ESCALATE_APPROVAL_S: '14400',
  BATON_ESCALATE_REVIEW_S: '172800',
  BATON_ESCALATE_TO: 'role:admin,alice',
  BATON_EVENT_RETENTION_DAYS: '365',
};


/** Parses the environment once. Throws a `ConfigError` naming each bad variable and an example value. */
export function loadConfig(env: Record<string, string | undefined>, overrides: Partial<Config> = {}): Config {
  const parsed = schema.safeParse(withoutEmpty(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0]) as keyof Env;
      return `  ${name}: ${issueText(issue, name, env[name])} (example: ${name}=${EXAMPLES[name] ?? '…'})`;
    });
    // One bad variable is one line; several are listed one per line.
    throw new ConfigError(lines.length === 1 ? `Invalid configuration: ${lines[0]?.trim()}` : `Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if (!(e.BATON_LEASE_TTL_MIN_S <= e.BATON_LEASE_TTL_DEFAULT_S && e.BATON_LEASE_TTL_DEFAULT_S <= e.BATON_LEASE_TTL_MAX_S)) {
    throw new ConfigError(
      'Invalid configuration:\n  BATON_LEASE_TTL_MIN_S <= BATON_LEASE_TTL_DEFAULT_S <= BATON_LEASE_TTL_MAX_S must hold (example: 30, 300, 3600)',
    );
  }
  if (e.BATON_DATABASE_LISTEN_URL !== undefined && e.DATABASE_URL === undefined) {
    throw new ConfigError('Invalid configuration: BATON_DATABASE_LISTEN_URL needs DATABASE_URL: it is the direct address of the database DATABASE_URL reaches through a pooler (example: DATABASE_URL=postgres://baton@pgbouncer:6432/baton with BATON_DATABASE_LISTEN_URL=postgres://baton@db1:5432/baton)');
  }
  if (e.BATON_DATABASE_REPLICA_URL !== undefined && e.DATABASE_URL === undefined) {
    throw new ConfigError('Invalid configuration: BATON_DATABASE_REPLICA_URL needs DATABASE_URL: the embedded database has no replica (example: DATABASE_URL=postgres://baton@db1:5432/baton with BATON_DATABASE_REPLICA_URL=postgres://baton@db2:5432/baton)');
  }
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    listenUrl: e.BATON_DATABASE_LISTEN_URL,
    readReplica: e.BATON_DATABASE_REPLICA_URL === undefined ? undefined : Object.freeze({ url: e.BATON_DATABASE_REPLICA_URL, maxLagS: e.BATON_DATABASE_REPLICA_MAX_LAG_S }),
    dataDir: e.BATON_DATA_DIR,
    publicUrl: e.BATON_PUBLIC_URL?.replace(/\/+$/, '') ?? `http://${e.HOST === '0.0.0.0' || e.HOST === '::' ? 'localhost' : e.HOST}:${e.PORT}`,
    bootstrapToken: e.BATON_BOOTSTRAP_TOKEN,
    logLevel: e.BATON_LOG_LEVEL,
    dbPoolSize: e.BATON_DB_POOL_SIZE,
    dbTimeouts: Object.freeze({
      connectMs: e.BATON_DB_CONNECT_TIMEOUT_MS,
      statementMs: e.BATON_DB_STATEMENT_TIMEOUT_MS,
      lockMs: e.BATON_DB_LOCK_TIMEOUT_MS,
      idleInTransactionMs: e.BATON_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    }),
    dbPreparedStatements: e.BATON_DB_PREPARED_STATEMENTS === 'on',
    bodyLimitBytes: e.BATON_BODY_LIMIT_BYTES,
    idempotencyTtlS: e.BATON_IDEMPOTENCY_TTL_S,
    rateLimit: Object.freeze(parseRate(e.BATON_RATE_LIMIT)),
    leaseTtl: Object.freeze({ defaultS: e.BATON_LEASE_TTL_DEFAULT_S, minS: e.BATON_LEASE_TTL_MIN_S, maxS: e.BATON_LEASE_TTL_MAX_S }),
    sweepIntervalMs: e.BATON_SWEEP_INTERVAL_MS,
    artifactMaxBytes: e.BATON_ARTIFACT_MAX_BYTES,
    uploads: Object.freeze({ perInstance: e.BATON_UPLOADS_PER_INSTANCE, perToken: e.BATON_UPLOADS_PER_TOKEN }),
    stripeWebhookSecret: e.STRIPE_WEBHOOK_SECRET,
    authWebhookSecret: e.AUTH_WEBHOOK_SECRET,
    cronSecret: e.CRON_SECRET,
    metricsAddress: e.BATON_METRICS_ADDRESS,
    secretKey: e.BATON_SECRET_KEY,
    webhookAllowPrivate: e.BATON_WEBHOOK_ALLOW_PRIVATE,
    webhookRetryScheduleMs: Object.freeze(e.BATON_WEBHOOK_RETRY_SCHEDULE.split(',').map((s) => Number(s) * 1000)),
    webhookIntervalMs: e.BATON_WEBHOOK_INTERVAL_MS,
    maxAttempts: e.BATON_MAX_ATTEMPTS,
    retryBackoffS: Object.freeze(e.BATON_RETRY_BACKOFF_S.split(',').map(Number)),
    separationOfDuties: e.BATON_SEPARATION_OF_DUTIES === 'on',
    tracing: tracingConfig(e),
    oidc: oidcConfig(e),
    session: Object.freeze({ idleS: e.BATON_SESSION_IDLE_TIMEOUT_S, absoluteS: e.BATON_SESSION_ABSOLUTE_TIMEOUT_S }),
    notify: Object.freeze({
      smtpUrl: e.BATON_SMTP_URL,
      smtpFrom: e.BATON_SMTP_FROM,
      chatWebhookUrl: e.BATON_CHAT_WEBHOOK_URL,
      digestS: e.BATON_NOTIFY_DIGEST_S,
      linkTtlS: e.BATON_NOTIFY_LINK_TTL_S,
    }),
    escalation: Object.freeze({ askS: e.BATON_ESCALATE_ASK_S, approvalS: e.BATON_ESCALATE_APPROVAL_S, reviewS: e.BATON_ESCALATE_REVIEW_S, to: Object.freeze(e.BATON_ESCALATE_TO.split(',')) }),
    eventRetentionDays: e.BATON_EVENT_RETENTION_DAYS,
    webhookDeliveryRetentionDays: e.BATON_WEBHOOK_DELIVERY_RETENTION_DAYS,
    ...overrides,
  });
}

const stdioSchema = z.object({
  BATON_URL: z.url().default('http://127.0.0.1:3000'),
  BATON_TOKEN: z.string().refine(isWellFormedToken, 'must be a Baton token (bat_…); an admin makes one with POST /api/v1/agents/{id}/tokens'),
});

/** What `baton mcp` needs: the Baton server to talk to, the token to talk with, and the API version of its answers (`--api`). */
export interface StdioConfig {
  readonly url: string;
  readonly token: string;
  readonly api?: 'v1' | 'v2';
}

/** Parses `baton mcp`'s environment (BATON_URL, BATON_TOKEN); throws a `ConfigError` naming each bad variable. */
export function loadStdioConfig(env: Record<string, string | undefined>): StdioConfig {
  const parsed = stdioSchema.safeParse(withoutEmpty(env));
  if (!parsed.success) {
    const examples = { BATON_URL: 'https://baton.example.com', BATON_TOKEN: 'bat_… (the token you were given)' };
    const lines = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0]) as keyof typeof examples;
      return `  ${name}: ${issueText(issue, name, env[name])} (example: ${name}=${examples[name]})`;
    });
    // One bad variable is one line; several are listed one per line.
    throw new ConfigError(lines.length === 1 ? `Invalid configuration: ${lines[0]?.trim()}` : `Invalid configuration:\n${lines.join('\n')}`);
  }
  return Object.freeze({ url: parsed.data.BATON_URL, token: parsed.data.BATON_TOKEN });
}

/** How Zod's own messages begin; any other was written for the variable and is kept. */
const ZOD_WORDING = /^(Invalid input|Too small|Too big|Invalid option)/;
/** Variables whose value may be a secret, so an error does not repeat it. */
const SECRET_LIKE = /SECRET|TOKEN|PASSWORD|KEY|URL|DSN|HEADERS/;

/**
 * What is wrong with one variable, in an operator's words and with the value given: "must be a
 * number, got "abc"" rather than Zod's "Invalid input: expected number, received NaN". Messages
 * written for a variable (its own refinements) are kept as they are.
 */
function issueText(issue: z.core.$ZodIssue, name: string, given: string | undefined): string {
  // A secret's value (a key, a token, a URL with its password) is never repeated to a log.
  const got = given === undefined || SECRET_LIKE.test(name) ? '' : `, got ${JSON.stringify(given)}`;
  if (!ZOD_WORDING.test(issue.message)) return issue.message;
  if (issue.code === 'invalid_type' && issue.expected === 'number') return `must be a number${got}`;
  if (issue.code === 'invalid_type' && issue.expected === 'int') return `must be a whole number${got}`;
  if (issue.code === 'invalid_type' && given === undefined) return 'must be set';
  if (issue.code === 'too_small' && typeof issue.minimum === 'number') return `must be ${issue.inclusive === false ? 'more than' : 'at least'} ${issue.minimum}${got}`;
  if (issue.code === 'too_big' && typeof issue.maximum === 'number') return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${issue.maximum}${got}`;
  if (issue.code === 'invalid_value') return `must be one of ${issue.values.map(String).join(', ')}${got}`;
  return issue.message;
}

/** An empty variable (`FOO=`) means "unset", as in most twelve-factor tools. */
function withoutEmpty(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
}

/**
 * Tracing is on when OTEL_TRACES_EXPORTER=otlp or an OTLP endpoint is set, unless
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. Signal-specific variables win over the
 * general ones; the general endpoint gets `/v1/traces` appended, as the specification says.
 */
function tracingConfig(e: Env): TracingConfig | undefined {
  const endpoint = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? e.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (e.OTEL_SDK_DISABLED?.toLowerCase() === 'true' || e.OTEL_TRACES_EXPORTER === 'none') return undefined;
  if (e.OTEL_TRACES_EXPORTER !== 'otlp' && endpoint === undefined) return undefined;
  const url =
    e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${(e.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`;
  return Object.freeze({
    serviceName: e.OTEL_SERVICE_NAME,
    url,
    protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    headers: Object.freeze({ ...keyValues(e.OTEL_EXPORTER_OTLP_HEADERS), ...keyValues(e.OTEL_EXPORTER_OTLP_TRACES_HEADERS) }),
    timeoutMs: e.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? e.OTEL_EXPORTER_OTLP_TIMEOUT ?? 10_000,
    sampler: e.OTEL_TRACES_SAMPLER,
    samplerRatio: e.OTEL_TRACES_SAMPLER_ARG ?? 1,
    resourceAttributes: Object.freeze(keyValues(e.OTEL_RESOURCE_ATTRIBUTES)),
  });
}

/** `a=1,b=x%20y` → `{ a: '1', b: 'x y' }` (the already-validated OTEL_* list form). */
function keyValues(text: string | undefined): Record<string, string> {
  if (!text) return {};
  return Object.fromEntries(
    text.split(',').map((pair) => {
      const at = pair.indexOf('=');
      return [pair.slice(0, at).trim(), percentDecoded(pair.slice(at + 1).trim())];
    }),
  );
}

function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function oidcConfig(e: Env): OidcConfig | undefined {
  if (!e.BATON_OIDC_ISSUER) {
    if (e.BATON_OIDC_REQUIRED === '1') throw new ConfigError('Invalid configuration:\n  BATON_OIDC_REQUIRED=1 needs BATON_OIDC_ISSUER (example: BATON_OIDC_ISSUER=https://login.example.com/realms/acme)');
    return undefined;
  }
  if (!e.BATON_OIDC_CLIENT_ID || !e.BATON_OIDC_CLIENT_SECRET) {
    throw new ConfigError('Invalid configuration:\n  BATON_OIDC_ISSUER needs BATON_OIDC_CLIENT_ID and BATON_OIDC_CLIENT_SECRET (example: BATON_OIDC_CLIENT_ID=baton)');
  }
  const roleMap = (e.BATON_OIDC_ROLE_MAP ?? '')
    .split(',')
    .filter(Boolean)
    .map((pair) => {
      const at = pair.lastIndexOf('=');
      return Object.freeze([pair.slice(0, at).trim(), pair.slice(at + 1) as Role] as const);
    });
  return Object.freeze({
    issuer: e.BATON_OIDC_ISSUER,
    clientId: e.BATON_OIDC_CLIENT_ID,
    clientSecret: e.BATON_OIDC_CLIENT_SECRET,
    name: e.BATON_OIDC_NAME,
    roleClaim: e.BATON_OIDC_ROLE_CLAIM,
    roleMap: Object.freeze(roleMap),
    defaultRole: e.BATON_OIDC_DEFAULT_ROLE,
    required: e.BATON_OIDC_REQUIRED === '1',
  });
}

function parseRate(text: string): { limit: number; windowS: number } {
  const [limit, window] = text.replace(/s$/, '').split('/').map(Number);
  if (!limit || !window) throw new ConfigError(`Invalid configuration:\n  BATON_RATE_LIMIT: both numbers must be positive (example: BATON_RATE_LIMIT=600/60s)`);
  return { limit, windowS: window };
}
