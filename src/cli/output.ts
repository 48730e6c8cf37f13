import Table from 'cli-table3';
import picocolors from 'picocolors';

/** Where a command writes, and how: colour and progress only on a terminal, JSON when asked. */
export interface Output {
  readonly json: boolean;
  readonly colors: ReturnType<typeof picocolors.createColors>;
  line(text: string): void;
  /** Prints `value` as JSON (one document, indented) on stdout. */
  data(value: unknown): void;
  /** A message for the person, on stderr (so stdout stays parseable). */
  note(text: string): void;
  /** Aligned columns, headed; the cells are plain text. */
  table(head: readonly string[], rows: readonly (readonly string[])[]): void;
  /** Runs `work`, showing a spinner on a terminal if it takes more than a second. */
  progress<T>(label: string, work: Promise<T>): Promise<T>;
}

/** Progress appears only after this long, so quick commands never flicker. */
const PROGRESS_AFTER_MS = 1000;

export function createOutput(options: { json: boolean; env: Record<string, string | undefined> }): Output {
  const stdoutTty = process.stdout.isTTY && !options.env.NO_COLOR;
  const stderrTty = process.stderr.isTTY;
  const colors = picocolors.createColors(stdoutTty);
  return {
    json: options.json,
    colors,
    line: (text) => process.stdout.write(`${text}\n`),
    data: (value) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`),
    note: (text) => process.stderr.write(`${text}\n`),
    table(head, rows) {
      const table = new Table({
        head: head.map((h) => colors.bold(h)),
        chars: { top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '', left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '  ' },
        style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
      });
      table.push(...rows.map((row) => [...row]));
      process.stdout.write(`${table.toString().split('\n').map((l) => l.trimEnd()).join('\n')}\n`);
    },
    async progress(label, work) {
      if (!stderrTty) return work;
      // Loaded only here: most commands never show progress, and none off a terminal.
      const { default: yoctoSpinner } = await import('yocto-spinner');
      const spinner = yoctoSpinner({ text: label, stream: process.stderr });
      const timer = setTimeout(() => spinner.start(), PROGRESS_AFTER_MS);
      try {
        return await work;
      } finally {
        clearTimeout(timer);
        if (spinner.isSpinning) spinner.stop();
      }
    },
  };
}

/** A status, coloured by where it stands in the workflow. */
export function statusText(colors: Output['colors'], status: string): string {
  switch (status) {
    case 'done':
      return colors.green(status);
    case 'in_progress':
      return colors.cyan(status);
    case 'in_review':
      return colors.magenta(status);
    case 'blocked':
    case 'cancelled':
      return colors.yellow(status);
    default:
      return status;
  }
}
