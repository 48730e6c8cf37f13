import type { Command } from 'commander';
import type { InputOf } from '../client/index.ts';
import { CliError, integer } from './context.ts';
import { EXIT } from './exit-codes.ts';

/** What a run spent, as the options of `runs usage` and `tasks heartbeat` give it. */
export interface UsageOptions {
  inputTokens?: number;
  outputTokens?: number;
  cost?: number;
  currency?: string;
  model?: string;
  toolCalls?: number;
}

/** Adds the usage options (increments since the last report, each optional) to `command`. */
export function withUsageOptions(command: Command): Command {
  return command
    .option('--input-tokens <n>', 'input tokens', integer('--input-tokens'))
    .option('--output-tokens <n>', 'output tokens', integer('--output-tokens'))
    .option('--cost <amount>', 'money spent, in --currency', amount)
    .option('--currency <code>', 'ISO 4217, USD by default (a run counts in one currency)')
    .option('--model <name>', 'the model that was used')
    .option('--tool-calls <n>', 'tool calls made', integer('--tool-calls'));
}

/** The usage the options give, as runs_usage and leases_heartbeat take it; empty when none was given. */
export function usageOf(o: UsageOptions): Omit<InputOf<'runs_usage'>, 'id'> {
  return {
    ...(o.inputTokens === undefined ? {} : { input_tokens: o.inputTokens }),
    ...(o.outputTokens === undefined ? {} : { output_tokens: o.outputTokens }),
    ...(o.cost === undefined ? {} : { cost: o.cost }),
    ...(o.currency ? { currency: o.currency } : {}),
    ...(o.model ? { model: o.model } : {}),
    ...(o.toolCalls === undefined ? {} : { tool_calls: o.toolCalls }),
  };
}

/** `--cost`: an amount of money; the server checks its bounds. */
function amount(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || value.trim() === '') throw new CliError(`--cost must be an amount such as 0.42, got "${value}"`, EXIT.usage);
  return n;
}
