/** bench/fleet.ts's Markdown report. */
import type { FleetReport, Operation } from './fleet-agents.ts';
import type { describeMachine } from './report.ts';
import type { LoopReport } from './server-inspector.ts';

export const OPERATIONS: Operation[] = ['heartbeat', 'cycle', 'claim'];

interface InstanceFigures {
  cpuSPerAgentHour: number | undefined;
  memory: { rssMiB: number; peakMiB: number } | undefined;
}

interface WebhookFigures {
  subscribers: number;
  /** null: every event type. */
  eventTypes: readonly string[] | null;
  /** Per receiver, in the window. */
  received: number[];
  repeats: number;
  lags: number[];
  /** webhook_deliveries rows per state at the end. */
  states: Record<string, number>;
}

/** Epoch ms: the primary was stopped, `pg_ctl promote` began, and it returned (the standby takes writes). */
export interface FailoverTimes {
  stoppedAt: number;
  promotingAt: number;
  promotedAt: number;
}

export interface Figures {
  agents: number;
  minutes: number;
  warmupS: number;
  humans: number;
  processes: number;
  rateLimit: string;
  fleet: FleetReport;
  lapsed: { all: number; wrong: number };
  serverCpuSPerAgentHour: number | undefined;
  databaseCpuSPerAgentHour: number | undefined;
  /** One per Baton instance, in start order. */
  instances: InstanceFigures[];
  /** PgBouncer's CPU per agent-hour, when the instances go through it. */
  pgbouncerCpuSPerAgentHour: number | undefined;
  /** The simulated clients' processes together (they share the cores). */
  clientsCpuSPerAgentHour: number | undefined;
  pgbouncer: boolean;
  webhooks: WebhookFigures;
  /** `on`, or what the benchmark did in its place. */
  autovacuum: string;
  /** When the window's failed calls started, by 10 s (undefined: none failed). */
  failuresInTime?: string | undefined;
  /** Heartbeats that ran in shared transactions over the window, and those transactions (from /metrics); undefined: not served. */
  heartbeatGroups: { calls: number; groups: number } | undefined;
  /** The first instance's event-loop delay and garbage-collection pauses over the window (through its inspector). */
  loop: LoopReport;
  growthBytesPerAgentDay: number;
  sizeBefore: number;
  sizeAfter: number;
  /** With `--failover-at-s`: when it happened, what the agents saw, and what the promoted database holds of what they were told. */
  failover:
    | (FailoverTimes & {
        /** Acknowledged writes' arrival (epoch ms): the last before the stop, the first after the promotion. */
        lastBefore: number | undefined;
        firstAfter: number | undefined;
        /** Leases claims and cycles answered with, and of them missing in the promoted database. */
        leases: number;
        missing: number;
        /** Leases acknowledged cycles ended, and of them still active there. */
        ended: number;
        notEnded: number;
        /** Pairs of leases on one task live at once. */
        overlapping: number;
      })
    | undefined;
}

export function report(f: Figures, command: string, date: Date, machine: Awaited<ReturnType<typeof describeMachine>>): string {
  const seconds = f.minutes * 60;
  const rows = OPERATIONS.map((op) => {
    const sorted = [...f.fleet.latencies[op]].sort((a, b) => a - b);
    const errors = Object.entries(f.fleet.measuredErrors)
      .filter(([key]) => key.startsWith(`${op} `))
      .reduce((n, [, count]) => n + count, 0);
    return `| ${op} | ${sorted.length} | ${(sorted.length / seconds).toFixed(1)} | ${ms(percentile(sorted, 0.5))} | ${ms(percentile(sorted, 0.99))} | ${ms(sorted.at(-1))} | ${errors} |`;
  });
  const errors = Object.entries(f.fleet.errors).map(([key, count]) => `${key}: ${count}`);
  const cpu = (s: number | undefined) => (s === undefined ? '–' : `${s.toFixed(2)} s`);
  const memory = (m: InstanceFigures['memory']) => (m ? `${m.rssMiB.toFixed(0)} MiB (peak ${m.peakMiB.toFixed(0)} MiB)` : '–');
  const setUp =
    f.instances.length === 1
      ? 'one Baton instance on PostgreSQL directly'
      : `${f.instances.length} Baton instances behind PgBouncer (transaction mode, BATON_DB_PREPARED_STATEMENTS=off), agents round-robin`;
  const w = f.webhooks;
  const lags = [...w.lags].sort((a, b) => a - b);
  const received = w.received.reduce((a, b) => a + b, 0);
  const lines = [
    `Command: \`${command}\` — ${date.toISOString()}, Baton ${machine.revision}; ${machine.cores} cores (${machine.cpu}), ${machine.memoryGiB} GiB, Node ${machine.node}, PostgreSQL ${machine.postgres}, load average ${machine.load} before the run.`,
    `${f.agents} agents (one principal and token each, BATON_RATE_LIMIT=${f.rateLimit} per token) in ${f.processes} process(es), ${f.humans} humans streaming, ${w.subscribers} webhook subscribers; ${setUp}; warm-up ${f.warmupS} s, ${f.minutes} measured minutes.`,
    '',
    '| operation | calls in window | per s | p50 ms | p99 ms | max ms | errors in window |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    `- Errors over the whole run: ${errors.length === 0 ? 'none' : errors.join(', ')}${f.fleet.samples.length ? ` (first: ${f.fleet.samples[0]})` : ''}; claims or cycles finding the queue empty: ${f.fleet.dry}.`,
    ...(f.failuresInTime ? [`- Failed calls of the window by when they started: ${f.failuresInTime}.`] : []),
    `- Leases lapsed wrongly (\`lease.expired\` for a lease its agent was still heartbeating on schedule): ${f.lapsed.wrong} of ${f.lapsed.all} lapsed; heartbeats later than the TTL after the last renewal: ${f.fleet.late} (longest gap between renewals ${(f.fleet.maxGapMs / 1000).toFixed(1)} s). Failed attempts simulated: ${f.fleet.failedAttempts}.`,
    `- CPU per agent-hour: server${f.instances.length > 1 ? 's' : ''} ${cpu(f.serverCpuSPerAgentHour)}${f.instances.length > 1 ? ` (${f.instances.map((i, n) => `#${n + 1} ${cpu(i.cpuSPerAgentHour)}`).join(', ')})` : ''}, PostgreSQL backends ${cpu(f.databaseCpuSPerAgentHour)}${f.pgbouncer ? `, PgBouncer ${cpu(f.pgbouncerCpuSPerAgentHour)}` : ''}; the simulated clients' process${f.processes > 1 ? 'es' : ''} ${cpu(f.clientsCpuSPerAgentHour)}.`,
    ...(f.heartbeatGroups ? [`- Heartbeats per shared transaction (\`baton_write_group_calls_total\` ÷ \`baton_write_groups_total\` over the window): ${(f.heartbeatGroups.calls / Math.max(1, f.heartbeatGroups.groups)).toFixed(2)} (${f.heartbeatGroups.calls} in ${f.heartbeatGroups.groups}).`] : []),
    `- The first instance's event loop over the window (\`monitorEventLoopDelay\` and \`gc\` entries, through its inspector): delay p50 ${f.loop.delayP50Ms.toFixed(1)} ms, p99 ${f.loop.delayP99Ms.toFixed(1)} ms, max ${f.loop.delayMaxMs.toFixed(1)} ms; ${f.loop.gcCount} garbage-collection pauses, ${(f.loop.gcTotalMs / 1000).toFixed(1)} s in all, the longest ${f.loop.gcMaxMs.toFixed(1)} ms.`,
    `- Server RSS at the end: ${f.instances.map((i, n) => `${f.instances.length > 1 ? `#${n + 1} ` : ''}${memory(i.memory)}`).join(', ')}.`,
    `- Autovacuum: ${f.autovacuum}.`,
    `- Database size ${(f.sizeBefore / 2 ** 20).toFixed(1)} → ${(f.sizeAfter / 2 ** 20).toFixed(1)} MiB over the window: ${(f.growthBytesPerAgentDay / 2 ** 20).toFixed(2)} MiB per agent-day.`,
    `- Stream frames received in the window: ${f.fleet.frames} (${(f.fleet.frames / seconds).toFixed(0)}/s over ${f.humans} streams); streams that ended early: ${f.fleet.streamsEnded}.`,
    `- Webhooks (${w.eventTypes ? w.eventTypes.join(', ') : 'every event type'}): ${received} deliveries received in the window (${(received / seconds).toFixed(1)}/s; per subscriber ${w.received.join(' / ')}), ${w.repeats} repeats; lag from the event's created_at to arrival p50 ${ms(percentile(lags, 0.5))} ms, p99 ${ms(percentile(lags, 0.99))} ms, max ${ms(lags.at(-1))} ms. Deliveries at the end: ${Object.entries(w.states).map(([state, n]) => `${state} ${n}`).join(', ') || 'none'}.`,
  ];
  const o = f.failover;
  if (o) {
    const after = (at: number | undefined, from: number) => (at === undefined ? 'none' : `${((at - from) / 1000).toFixed(2)} s`);
    lines.push(
      `- Failover (primary stopped with \`pg_ctl stop -m immediate\`, then the synchronous standby promoted): \`pg_ctl promote\` took ${after(o.promotedAt, o.promotingAt)}; the first write acknowledged ${after(o.firstAfter, o.promotedAt)} after the promotion (${after(o.firstAfter, o.stoppedAt)} after the primary stopped; the last before it ${o.lastBefore === undefined ? 'none' : `${((o.stoppedAt - o.lastBefore) / 1000).toFixed(2)} s`} before). Of ${o.leases} leases acknowledged over the run, ${o.missing} missing on the promoted database; of ${o.ended} leases acknowledged cycles ended, ${o.notEnded} still active there; pairs of leases on one task live at once: ${o.overlapping}.`,
    );
  }
  return lines.join('\n');
}

function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

function ms(value: number | undefined): string {
  return value === undefined ? '–' : value.toFixed(1);
}
