import { type Command, Option } from 'commander';
import { type BatonClient, type CallOptions, createClient } from '../client/index.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { httpFetch } from './http-fetch.ts';
import { createOutput, type Output } from './output.ts';
import { configPath, effectiveLogin, readLogin } from './session.ts';

/** A failure the CLI itself reports: its message is the one line printed, `code` the exit code. */
export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** What every command's action gets: where to write, and the client of the logged-in server. */
export interface Context {
  readonly env: Record<string, string | undefined>;
  /** The arguments `baton` was given (without `baton`), to print a command to run next. */
  readonly argv: readonly string[];
  readonly out: Output;
  /** The server's URL and a client with the token (BATON_URL/BATON_TOKEN, else the login). */
  connect(): Promise<{ url: string; client: BatonClient }>;
  /** Call options of a write: the key given with --idempotency-key, else a fresh one per invocation. */
  write(options: { idempotencyKey?: string }, extra?: CallOptions): CallOptions;
}

/** A command's action: the context, then what commander passes (arguments, options). */
export type Action = (ctx: Context, ...args: never[]) => Promise<void>;
/** Makes a command's action runnable by commander: builds its context and reports what it throws. */
export type Run = (action: Action) => (...args: unknown[]) => Promise<void>;

/** `--idempotency-key`, which every write command takes. */
export const idempotencyOption = () => new Option('--idempotency-key <key>', 'reuse this key, so a retried command replays instead of writing twice');

export function createContext(command: Command, env: Record<string, string | undefined>, argv: readonly string[]): Context {
  const { json } = command.optsWithGlobals<{ json?: boolean }>();
  const out = createOutput({ json: json === true, env });
  // One key per invocation: a script that retries the same command line passes --idempotency-key.
  // Made at the first write: a read needs none, and the first use of crypto costs it some 10 ms.
  let key: string | undefined;
  return {
    env,
    argv,
    out,
    async connect() {
      const login = effectiveLogin(env, await readLogin(configPath(env)));
      if (!login.url || !login.token) {
        throw new CliError('Not logged in: run `baton login --url <server> --token <token>`, or set BATON_URL and BATON_TOKEN.', EXIT.auth);
      }
      return { url: login.url, client: createClient({ baseUrl: login.url, token: login.token, fetch: httpFetch }) };
    },
    write: (options, extra = {}) => ({ ...extra, idempotencyKey: options.idempotencyKey ?? (key ??= crypto.randomUUID()) }),
  };
}

/** Collects a repeatable option, splitting commas: `--label a --label b,c` is [a, b, c]. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), ...value.split(',').map((v) => v.trim()).filter(Boolean)];
}

const UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Parses a duration option (`90`, `90s`, `10m`, `2h`, `1d`) into seconds, or fails with a usage error naming it. */
export function duration(name: string) {
  return (value: string): number => {
    const match = /^(\d+)([smhd]?)$/.exec(value.trim());
    if (!match) throw new CliError(`${name} must be a duration such as 90s, 10m, 2h or 1d, got "${value}"`, EXIT.usage);
    return Number(match[1]) * (UNIT_S[match[2] || 's'] ?? 1);
  };
}

/** Parses a positive integer option or fails with a usage error naming it. */
export function integer(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) throw new CliError(`${name} must be a whole number, got "${value}"`, EXIT.usage);
    return n;
  };
}
