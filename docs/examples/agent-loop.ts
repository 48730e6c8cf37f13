import { createClient } from 'baton-tasks-client';

// An agent's whole loop: claim work, report progress, hand it to review. Stops when the queue is empty.
const baton = createClient({ baseUrl: process.env.BATON_URL ?? 'http://127.0.0.1:3000', token: process.env.BATON_TOKEN ?? '' });
const me = await baton.whoami({});
console.log(`working as ${me.principal.name}`);
for (;;) {
  const { claims } = await baton.tasks.claimNext({ labels: ['docs'], limit: 1 });
  if (claims.length === 0) break; // a long-running agent waits retry_after_s and asks again
  for (const { task, lease } of claims) {
    await baton.leases.heartbeat({ id: lease.id, note: `working on ${task.title}` });
    // … the actual work goes here; heartbeat again before lease.expires_at …
    await baton.tasks.handIn({ id: task.id, summary: `Drafted ${task.title}; see the diff.`, lease_epoch: lease.epoch });
    console.log(`ready for review: ${task.id} ${task.title}`);
  }
}
