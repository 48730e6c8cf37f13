/**
 * One process of simulated agents for bench/fleet.ts, started with `fork` (IPC). It receives a
 * `FleetPlan`, runs its share of the fleet against Baton over HTTP keep-alive (`node:http` with one
 * keep-alive agent, which pools connections per origin), and answers with a `FleetReport`, then exits.
 * Not `fetch`: its web streams and headers objects cost this process as much CPU as the server it
 * measures (0.56 of a core at 10,000 agents), and the clients share the server's cores.
 *
 * Each agent claims a task (TTL 180 s) at its point of the ramp, heartbeats every 60 s (one in ten
 * with a note), and every 5 minutes hands its task in and claims the next in one call
 * (`POST /leases/{id}/cycle`), one attempt in a hundred as `outcome: failed`. The first cycle of
 * each agent falls at a spread offset in 0–300 s, so cycles and heartbeats arrive at steady rates.
 * Each agent is its own principal and sends its own token (bench/fleet-services.ts seeds them), to
 * instance `n mod urls.length`. Optional humans hold the unfiltered event stream open (the admin
 * token, spread over the instances likewise) and count its frames.
 */
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export interface FleetPlan {
  /** The Baton instances; agent n and human n talk to `urls[n % urls.length]`. */
  urls: string[];
  /** The humans' (admin) token. */
  token: string;
  /** This process's agents' tokens: agent `first + i` sends `tokens[i]`. */
  tokens: string[];
  /** This process's agents are numbers [first, first + count) of `total`. */
  first: number;
  count: number;
  total: number;
  /** Unfiltered SSE streams this process holds open. */
  humans: number;
  /** Epoch ms: the ramp starts; the measured window starts; everything stops. */
  startAt: number;
  rampMs: number;
  measureFrom: number;
  measureTo: number;
  heartbeatMs: number;
  cycleMs: number;
  ttlS: number;
  /** Epoch ms the database's primary is stopped, when the run has a failover: then the report's `acknowledged` is kept. */
  failoverAt?: number | undefined;
}

export type Operation = 'claim' | 'heartbeat' | 'cycle';

export interface FleetReport {
  /** Latencies (ms) of the calls started inside the measured window, per operation. */
  latencies: Record<Operation, number[]>;
  /** Calls per operation over the whole run (ramp, warm-up and measured window). */
  calls: Record<Operation, number>;
  /** Failed calls per `operation status code` (0: no answer), whole run and measured window. */
  errors: Record<string, number>;
  measuredErrors: Record<string, number>;
  /** When each failed call of the measured window started (epoch ms; the first FAILURES_TIMED). */
  failedAt: number[];
  /** The first few failures' text. */
  samples: string[];
  /** Claims and cycles that found the queue empty. */
  dry: number;
  failedAttempts: number;
  /** Heartbeats that came more than a TTL after the lease's last renewal (the lease may lapse deservedly). */
  late: number;
  /** Leases an agent stopped keeping alive (a failed call, or a late heartbeat): their lapse is deserved. */
  abandoned: string[];
  /** The longest gap (ms) between a lease's renewals seen by any agent. */
  maxGapMs: number;
  /** SSE frames received by this process's humans in the measured window, and streams that ended early. */
  frames: number;
  streamsEnded: number;
  /**
   * Kept in a run with a failover, to check against the promoted database: the leases claims and
   * cycles answered with, the leases cycles ended, and when each acknowledged write arrived from
   * FAILOVER_SPAN_MS before the failover to FAILOVER_SPAN_MS after (epoch ms).
   */
  acknowledged?: { leases: string[]; ended: string[]; times: number[] };
}

const SAMPLES = 5;
/** Either side of a failover, the span whose acknowledged writes' times are kept. */
const FAILOVER_SPAN_MS = 180_000;
/** POSTs `body`; status 0 and the error's message when no answer came. */
function postJson(keepAlive: Agent, url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string; retryAfter: string | undefined }> {
  return new Promise((resolve) => {
    const failed = (error: Error) => resolve({ status: 0, text: error.message, retryAfter: undefined });
    const call = request(url, { method: 'POST', agent: keepAlive, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const retryAfter = response.headers['retry-after'];
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), retryAfter });
      });
      response.on('error', failed);
    });
    call.on('error', failed);
    call.end(body);
  });
}
/** What starts each frame's one data line in Baton's event stream (after its id and event lines). */
const DATA_LINE = Buffer.from('\ndata: ');
/** Failed calls of the window whose start is kept, to place them in time. */
const FAILURES_TIMED = 10_000;
/** How long a refused call is retried (a heartbeat's interval: the lease's TTL leaves room for it). */
const RETRY_FOR_MS = 60_000;

function fleet(plan: FleetPlan): Promise<FleetReport> {
  const report: FleetReport = {
    latencies: { claim: [], heartbeat: [], cycle: [] },
    calls: { claim: 0, heartbeat: 0, cycle: 0 },
    errors: {},
    measuredErrors: {},
    failedAt: [],
    samples: [],
    dry: 0,
    failedAttempts: 0,
    late: 0,
    abandoned: [],
    maxGapMs: 0,
    frames: 0,
    streamsEnded: 0,
    ...(plan.failoverAt === undefined ? {} : { acknowledged: { leases: [], ended: [], times: [] } }),
  };
  const acknowledged = report.acknowledged;
  let keys = 0;
  const stop = new AbortController();
  // Every call and stream of this process, over keep-alive connections pooled per instance.
  const keepAlive = new Agent({ keepAlive: true });
  const failed = (op: Operation, status: number, text: string, started: number) => {
    const key = `${op} ${status}`;
    report.errors[key] = (report.errors[key] ?? 0) + 1;
    if (started >= plan.measureFrom && started < plan.measureTo) {
      report.measuredErrors[key] = (report.measuredErrors[key] ?? 0) + 1;
      if (report.failedAt.length < FAILURES_TIMED) report.failedAt.push(started);
    }
    if (report.samples.length < SAMPLES) report.samples.push(`${key}: ${text.slice(0, 300)}`);
  };

  /**
   * POSTs and returns the parsed body (undefined after counting the failure) and the status (0: no
   * answer). A refusal Baton calls retryable (503, 429, or no answer at all) is sent again with the
   * same Idempotency-Key, after its Retry-After doubled at each attempt (jittered), as the problem's hint says, for up to
   * RETRY_FOR_MS: an agent keeps its lease through a refused heartbeat rather than dropping it and
   * claiming anew. Every attempt counts as a call, with its latency and any error.
   */
  const post = async <T>(n: number, op: Operation, path: string, body: object): Promise<[T | undefined, number]> => {
    const key = `fleet-${process.pid}-${keys++}`;
    const first = Date.now();
    for (let attempt = 0; ; attempt++) {
      const [answer, status, retryAfterS] = await send<T>(n, op, path, body, key);
      // Exponential back-off from Retry-After (1, 2, 4, 8, 16 s), jittered: a fleet retrying every
      // second would multiply the load that refused it.
      const wait = Math.min(16, retryAfterS * 2 ** attempt) * 1000 * (0.5 + Math.random());
      if (answer !== undefined || ![0, 429, 503].includes(status) || Date.now() + wait - first > RETRY_FOR_MS || Date.now() + wait > plan.measureTo) return [answer, status];
      await sleep(wait);
    }
  };
  const send = async <T>(n: number, op: Operation, path: string, body: object, key: string): Promise<[T | undefined, number, number]> => {
    const started = Date.now();
    const t0 = performance.now();
    report.calls[op]++;
    const headers = { authorization: `Bearer ${plan.tokens[n - plan.first]}`, 'idempotency-key': key, 'content-type': 'application/json' };
    const { status, text, retryAfter } = await postJson(keepAlive, `${urlOf(n)}/api/v1${path}`, headers, JSON.stringify(body));
    const retryAfterS = Math.min(10, Math.max(1, Number(retryAfter) || 1));
    if (started >= plan.measureFrom && started < plan.measureTo) report.latencies[op].push(performance.now() - t0);
    if (status !== 200) {
      failed(op, status, text, started);
      return [undefined, status, retryAfterS];
    }
    const now = Date.now();
    if (acknowledged && plan.failoverAt !== undefined && Math.abs(now - plan.failoverAt) <= FAILOVER_SPAN_MS) acknowledged.times.push(now);
    return [JSON.parse(text) as T, status, retryAfterS];
  };

  const urlOf = (n: number) => plan.urls[n % plan.urls.length] ?? '';
  type Claims = { claims: { lease: { id: string } }[] };
  const leaseOf = (answer: Claims | undefined): string | undefined => {
    if (answer && answer.claims.length === 0) report.dry++;
    const lease = answer?.claims[0]?.lease.id;
    if (lease !== undefined) acknowledged?.leases.push(lease);
    return lease;
  };

  /** Waits until `at`, or the end of the run if that comes first. */
  const waitUntil = (at: number) => {
    const wait = Math.min(at, plan.measureTo) - Date.now();
    // No abort signal: the wait ends by the run's end anyway, and ten thousand listeners on one
    // signal made each addEventListener a scan of them all (a quarter of this process's CPU).
    return wait > 0 ? sleep(wait) : Promise.resolve();
  };

  const agent = async (n: number): Promise<void> => {
    await waitUntil(plan.startAt + (plan.rampMs * n) / plan.total);
    let beats = 0;
    let attempts = 0;
    let lease: string | undefined;
    let renewedAt = Date.now();
    let nextCycle = 0;
    let nextBeat = 0;
    const claim = async () => {
      lease = leaseOf((await post<Claims>(n, 'claim', '/tasks/claim', { ttl_s: plan.ttlS }))[0]);
      renewedAt = Date.now();
      nextBeat = renewedAt + plan.heartbeatMs;
    };
    await claim();
    // A spread first cycle (the golden-ratio sequence over the agents), then one every cycleMs.
    nextCycle = Date.now() + ((n * 0.6180339887) % 1) * plan.cycleMs;
    while (Date.now() < plan.measureTo) {
      if (lease === undefined) {
        // No lease (the queue ran dry, or a call failed): try claiming again at the next heartbeat.
        await waitUntil(nextBeat);
        if (Date.now() >= plan.measureTo) return;
        await claim();
        continue;
      }
      const cycling = nextCycle <= nextBeat;
      await waitUntil(cycling ? nextCycle : nextBeat);
      if (Date.now() >= plan.measureTo) return;
      const gap = Date.now() - renewedAt;
      report.maxGapMs = Math.max(report.maxGapMs, gap);
      if (gap > plan.ttlS * 1000) {
        report.late++;
        report.abandoned.push(lease);
      }
      if (cycling) {
        const fail = attempts++ % 100 === n % 100;
        if (fail) report.failedAttempts++;
        const ending = fail ? { outcome: 'failed', reason: 'simulated failure' } : { summary: 'done' };
        const [answer, status] = await post<Claims>(n, 'cycle', `/leases/${lease}/cycle`, { ...ending, ttl_s: plan.ttlS });
        // A lease the server says has run out (409) was not abandoned: its lapse counts as wrong.
        if (answer === undefined && status !== 409) report.abandoned.push(lease);
        if (answer !== undefined) acknowledged?.ended.push(lease);
        lease = leaseOf(answer);
        renewedAt = Date.now();
        nextBeat = renewedAt + plan.heartbeatMs;
        nextCycle += plan.cycleMs;
      } else {
        const note = beats++ % 10 === n % 10 ? { note: `step ${beats} of agent ${n}` } : {};
        const [renewed, status] = await post(n, 'heartbeat', `/leases/${lease}/heartbeat`, note);
        if (renewed === undefined) {
          if (status !== 409) report.abandoned.push(lease);
          lease = undefined;
        } else renewedAt = Date.now();
        nextBeat += plan.heartbeatMs;
      }
    }
  };

  const human = (_: unknown, h: number): Promise<void> =>
    new Promise((resolve) => {
      const ended = () => {
        if (!stop.signal.aborted) report.streamsEnded++;
        resolve();
      };
      const stream = request(`${urlOf(h)}/api/v1/events/stream`, { agent: keepAlive, headers: { authorization: `Bearer ${plan.token}` }, signal: stop.signal }, (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          return ended();
        }
        // Frames are counted by their `data:` lines in the raw bytes, not decoded and split: at 20,000
        // agents, 100 streams bring 60,000 frames a second, and parsing them as text took this process
        // more CPU than the server it measures. The last bytes of a chunk are kept for a line cut in two.
        let tail = Buffer.alloc(0);
        response.on('data', (chunk: Buffer) => {
          const bytes = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
          let frames = 0;
          for (let at = bytes.indexOf(DATA_LINE); at >= 0; at = bytes.indexOf(DATA_LINE, at + DATA_LINE.length)) frames++;
          tail = Buffer.from(bytes.subarray(Math.max(0, bytes.length - (DATA_LINE.length - 1))));
          const now = Date.now();
          if (now >= plan.measureFrom && now < plan.measureTo) report.frames += frames;
        });
        response.on('end', ended);
        response.on('error', ended);
      });
      stream.on('error', ended);
      stream.end();
    });

  const humans = Array.from({ length: plan.humans }, human);
  const agents = Array.from({ length: plan.count }, (_, i) => agent(plan.first + i));
  return Promise.all(agents).then(async () => {
    stop.abort();
    await Promise.all(humans);
    keepAlive.destroy();
    return report;
  });
}

process.once('message', (plan: FleetPlan) => {
  fleet(plan).then(
    (report) => process.send?.({ report }, () => process.exit(0)),
    (error: unknown) => process.send?.({ error: (error as Error).stack ?? String(error) }, () => process.exit(1)),
  );
});
