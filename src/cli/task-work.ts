import type { Command } from 'commander';
import type { BatonClient } from '../client/index.ts';
import { CliError, collect, idempotencyOption, integer, type Run } from './context.ts';
import { EXIT } from './exit-codes.ts';
import { resolveTaskId, TASK_ID } from './short-ids.ts';
import { printTask } from './task-print.ts';
import { type UsageOptions, usageOf, withUsageOptions } from './usage-options.ts';

/** An agent's work loop under `baton tasks`: claim, heartbeat, release, hand in. */
export function addWorkCommands(tasks: Command, run: Run): void {
  tasks
    .command('claim')
    .description('claim a task: the one given, or the next claimable one (highest priority first); exit 8 if there was none to claim')
    .argument('[id]', `${TASK_ID}; omitted: the next claimable task`)
    .option('--label <label>', 'with no id: only tasks carrying these labels (repeatable)', collect)
    .option('--ttl <seconds>', 'lease length', integer('--ttl'))
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string | undefined, o: { label?: string[]; ttl?: number; idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const ttl = o.ttl === undefined ? {} : { ttl_s: o.ttl };
        const claims = id ? [await client.tasks.claim({ id: await resolveTaskId(client, id), ...ttl }, ctx.write(o))] : (await client.tasks.claimNext({ ...(o.label ? { labels: o.label } : {}), ...ttl }, ctx.write(o))).claims;
        // As `baton wait` does when nothing arrives: not a failure, but a script's loop can tell it from a claim.
        if (claims.length === 0) process.exitCode = EXIT.idle;
        if (ctx.out.json) return ctx.out.data(claims);
        if (claims.length === 0) return ctx.out.note('nothing to claim');
        for (const { task, lease } of claims) ctx.out.line(`claimed ${task.id} ${task.title ?? ''}\nlease ${lease.id} epoch ${lease.epoch} expires ${lease.expires_at}`);
      }),
    );

  withUsageOptions(
    tasks
      .command('heartbeat')
      .description('extend the lease on a task you hold; the usage options report what the run spent since the last report, in the same call')
      .argument('<id>', `${TASK_ID}, or lease id`)
      .option('--note <text>', 'progress, one line for the timeline')
      .option('--ttl <seconds>', 'new lease length', integer('--ttl')),
  )
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, o: UsageOptions & { note?: string; ttl?: number; idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const usage = usageOf(o);
        const lease = await client.leases.heartbeat(
          { id: await leaseId(client, id), ...(o.note ? { note: o.note } : {}), ...(o.ttl === undefined ? {} : { ttl_s: o.ttl }), ...(Object.keys(usage).length > 0 ? { usage } : {}) },
          ctx.write(o),
        );
        if (ctx.out.json) return ctx.out.data(lease);
        ctx.out.line(`lease ${lease.id} expires ${lease.expires_at}`);
      }),
    );

  tasks
    .command('release')
    .description('give a task back (it returns to todo for the next claimer)')
    .argument('<id>', `${TASK_ID}, or lease id`)
    .option('--note <text>', 'why, for the next claimer')
    .option('--failed <reason>', 'the attempt failed: counted, so the task backs off or leaves the queue when out of attempts')
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, id: string, o: { note?: string; failed?: string; idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const how = o.failed === undefined ? {} : { outcome: 'failed' as const, reason: o.failed };
        const { task } = await client.leases.release({ id: await leaseId(client, id), ...how, ...(o.note ? { note: o.note } : {}) }, ctx.write(o));
        await printTask(ctx, client, task, o.failed === undefined ? `released ${task.id}` : `released ${task.id} as a failed attempt (counted; baton tasks show ${task.id} says how many are left)`);
      }),
    );

  tasks
    .command('hand-in')
    .description('hand a task you hold in for review, saying what you did')
    .argument('<id>', TASK_ID)
    .requiredOption('-s, --summary <text>', 'what you did and how to check it (Markdown)')
    .option('--artifact <id>', 'an artifact for the reviewer, art_… (repeatable)', collect)
    .addOption(idempotencyOption())
    .action(
      run(async (ctx, given: string, o: { summary: string; artifact?: string[]; idempotencyKey?: string }) => {
        const { client } = await ctx.connect();
        const id = await resolveTaskId(client, given);
        const task = await client.tasks.handIn({ id, summary: o.summary, ...(o.artifact ? { artifacts: o.artifact } : {}) }, ctx.write(o));
        await printTask(ctx, client, task, `${task.id} handed in for review`);
      }),
    );
}

/** A lease id as given, or the current lease of the task given. */
export async function leaseId(client: BatonClient, given: string): Promise<string> {
  if (given.startsWith('lea_')) return given;
  const id = await resolveTaskId(client, given);
  const task = await client.tasks.get({ id });
  if (!task.lease) throw new CliError(`Task ${id} has no lease: it is ${task.status}. Claim it first (baton tasks claim ${id}).`, EXIT.conflict);
  return task.lease.id;
}
