/**
 * A reason the process must not start (the data directory is held by another process, the
 * database was migrated by a different version of Baton). Its message is one line for an
 * operator, naming what is wrong and what to do; the entry points print it without a stack and
 * exit non-zero.
 */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** A bad configuration variable; its message names the variable and an example value. Here rather than in config.ts so the command line can tell it apart without loading Zod. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
