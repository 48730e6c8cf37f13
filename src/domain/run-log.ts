/** A run's log holds at most this many lines of at most `RUN_LOG_LINE_MAX` characters (spec/runs.md). */
export const RUN_LOG_MAX_LINES = 500;
export const RUN_LOG_LINE_MAX = 2000;
/** The most lines one `runs_log` call appends. */
export const RUN_LOG_BATCH_MAX = 100;
