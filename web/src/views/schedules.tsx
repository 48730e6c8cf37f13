import { useEffect, useRef, useState } from 'preact/hooks';
import type { InputOf } from '../../../src/client/index.ts';
import { useAction } from '../action.ts';
import { call, getAll, type ItemOf, type Problem, problemOf } from '../api.ts';
import { cadence } from '../cadence.ts';
import { ActorChip, Loading, ProblemNotice } from '../components.tsx';
import { useConfirm } from '../confirm.tsx';
import { ago, ahead } from '../format.ts';
import { useNow } from '../hooks.ts';
import { can, useEvents, useSession } from '../session.ts';
import type { BatonEvent } from '../types.ts';
import { ScheduleForm } from './schedule-form.tsx';
import type { Template } from './templates.tsx';

/** After a task a schedule may have made, when the page reads the schedules again (its run advances the schedule just after). */
const RUN_SETTLE_MS = 1000;

type Schedule = ItemOf<'schedules_list'>;

/** What the page reads beside the schedules: the newest skip of each, the titles of the tasks they made last, the templates by id. */
interface Context {
  skips: Map<string, BatonEvent>;
  titles: Map<string, string>;
  templates: Template[];
}

/**
 * Schedules: recurring work (spec/collaboration.md, "Recurring work"). Each schedule with its
 * cadence in words, what it creates, its next run, its last run (the task it created, linked, or
 * the newest skip and why), its state and creator; create one, pause and resume it (If-Match),
 * delete it after asking. Live: a schedule's or template's events, and a task created by a schedule's creator, read the list again.
 */
export function Schedules() {
  const session = useSession();
  const [schedules, setSchedules] = useState<Schedule[] | null>(null);
  const [context, setContext] = useState<Context>({ skips: new Map(), titles: new Map(), templates: [] });
  const [loadProblem, setLoadProblem] = useState<Problem | null>(null);
  const [creating, setCreating] = useState(false);
  const action = useAction();
  const create = useAction();
  const confirm = useConfirm();
  const mayCreate = can(session, 'schedules_create');
  // Only the newest of overlapping reads is shown, so a slow older answer never replaces a newer one.
  const reads = useRef(0);
  const load = async () => {
    const read = ++reads.current;
    try {
      const [list, skips, templates] = await Promise.all([
        getAll('schedules_list', {}),
        // The newest hundred skips are enough to tell each schedule's latest one.
        can(session, 'events_list') ? call('events_list', { types: ['schedule.skipped'], order: 'desc', limit: 100, view: 'full' }).then((page) => page.data as BatonEvent[]) : [],
        can(session, 'templates_list') ? getAll('templates_list', {}).then((res) => res.data as Template[]) : [],
      ]);
      const made = [...new Set(list.data.flatMap((s) => (s.last_task_id ? [s.last_task_id] : [])))];
      // A task deleted since keeps its id as its name.
      const titles = await Promise.all(made.map((id) => call('tasks_get', { id }).then((t) => [id, t.title] as const, () => [id, id] as const)));
      const newest = new Map<string, BatonEvent>();
      for (const skip of skips) if (!newest.has(skip.subject)) newest.set(skip.subject, skip);
      if (read !== reads.current) return;
      setContext({ skips: newest, titles: new Map(titles), templates });
      setSchedules(list.data);
      setLoadProblem(null);
    } catch (error) {
      if (read === reads.current) setLoadProblem(problemOf(error));
    }
  };
  useEffect(() => void load(), []);
  // Templates are offered in the form and named on the cards. A run writes no schedule event when it creates its task: a task created by a schedule's creator may be one.
  useEvents((event) => {
    if (event.type.startsWith('schedule.') || event.type.startsWith('template.')) void load();
    else if (event.type === 'task.created' && schedules?.some((s) => s.enabled && s.created_by.id === event.actor.id)) {
      // A run commits its task first and the schedule's last run a transaction later, with no event
      // of its own: read now, and once more when that pass is surely over, to name the task it made.
      void load();
      setTimeout(() => void load(), RUN_SETTLE_MS);
    }
  });

  const toggle = (s: Schedule) => void action.send({ operation: 'schedules_update', input: { id: s.id, enabled: !s.enabled }, ifMatch: s.version }, load);
  const remove = async (s: Schedule) => {
    const yes = await confirm.ask({ title: `Delete “${s.name}”?`, body: 'It creates no more tasks. The tasks it created stay, with their history.', confirm: 'Delete schedule' });
    if (yes) void action.send({ operation: 'schedules_delete', input: { id: s.id } }, load);
  };
  const submit = (input: InputOf<'schedules_create'>) =>
    void create.send({ operation: 'schedules_create', input }, async () => {
      setCreating(false);
      await load();
    });
  const newButton = mayCreate && !creating && (
    <button type="button" class="button-primary" onClick={() => setCreating(true)}>
      New schedule
    </button>
  );

  return (
    <section class="page" aria-labelledby="schedules-title">
      <div class="page-head">
        <h1 id="schedules-title">Schedules</h1>
        {schedules && schedules.length > 0 && newButton}
        <p class="muted page-lede">Recurring work: each schedule creates a task, or a template’s tasks, on a cadence.</p>
      </div>
      {confirm.dialog}
      {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
      {creating && <ScheduleForm templates={context.templates} busy={create.busy} problem={create.problem} onDismiss={create.dismiss} onCreate={submit} onCancel={() => setCreating(false)} />}
      {loadProblem && <ProblemNotice problem={loadProblem} onRetry={() => void load()} />}
      {!schedules ? (
        !loadProblem && <Loading what="schedules" />
      ) : schedules.length === 0 ? (
        !creating && (
          <div class="card empty-state">
            <h2>No schedules yet</h2>
            <p>
              A schedule creates work on a cadence, so nobody has to remember it: a task (or a template’s whole set of tasks) every weekday at 09:00, every Monday, on the 1st of each month. Each run creates its
              task once, as the schedule’s creator, and you choose what happens while the last one is still open.
            </p>
            <p class="muted small">
              Create one here, or with <code>baton schedules create</code> or <code>POST /api/v1/schedules</code>.
            </p>
            {newButton}
          </div>
        )
      ) : (
        <ul class="schedule-list">
          {schedules.map((s) => (
            <ScheduleCard key={s.id} schedule={s} context={context} busy={action.busy} onToggle={() => toggle(s)} onDelete={() => void remove(s)} />
          ))}
        </ul>
      )}
    </section>
  );
}

function ScheduleCard({ schedule: s, context, busy, onToggle, onDelete }: { schedule: Schedule; context: Context; busy: boolean; onToggle: () => void; onDelete: () => void }) {
  const session = useSession();
  const now = useNow(30_000);
  const words = cadence(s.cron);
  const next = s.next_runs[0];
  const title = typeof s.task?.['title'] === 'string' ? s.task['title'] : null;
  const template = s.template && context.templates.find((t) => t.id === s.template?.id);
  // A schedule is its creator's to change, or any human's (spec/collaboration.md); the server decides.
  const mayChange = can(session, 'schedules_update') && (session.whoami.principal.kind === 'human' || s.created_by.id === session.whoami.principal.id || session.whoami.scopes.includes('agents:admin'));
  const headingId = `schedule-${s.id}-name`;
  return (
    <li class="card schedule" data-schedule-id={s.id} aria-labelledby={headingId}>
      <div class="schedule-head">
        <h2 id={headingId} class="schedule-name">
          {s.name}
        </h2>
        {s.enabled ? <span class="status status-done">Active</span> : <span class="status status-paused">Paused</span>}
      </div>
      <dl class="facts schedule-facts">
        <dt>Cadence</dt>
        <dd data-testid="cadence">
          {words ? (
            <>
              {words} {s.time_zone} <code class="small">{s.cron}</code>
            </>
          ) : (
            <>
              <code>{s.cron}</code> in {s.time_zone}
            </>
          )}
        </dd>
        <dt>Creates</dt>
        <dd>{s.template ? <>The tasks of template {template ? `“${template.name}”` : <code>{s.template.id}</code>}</> : <>A task: “{title ?? ''}”</>}</dd>
        <dt>Next run</dt>
        <dd data-testid="next-run">
          {next ? (
            <span title={`Then ${s.next_runs.slice(1).map(when).join(', ')}`}>
              <time dateTime={next}>{when(next)}</time> <span class="muted">({ahead(next, now)})</span>
            </span>
          ) : s.enabled ? (
            'None: the expression has no later time'
          ) : (
            'None while paused'
          )}
          {s.held && <span class="muted"> · the run of {when(s.held)} waits for the last task to close</span>}
        </dd>
        <dt>Last run</dt>
        <dd data-testid="last-run">
          <LastRun schedule={s} skip={context.skips.get(s.id)} title={s.last_task_id ? context.titles.get(s.last_task_id) : undefined} />
        </dd>
        <dt>Created by</dt>
        <dd>
          <ActorChip actor={s.created_by} /> <span class="muted small">{ago(s.created_at, now)}</span>
        </dd>
      </dl>
      {mayChange && (
        <div class="schedule-actions">
          <button type="button" class="button" disabled={busy} onClick={onToggle}>
            {s.enabled ? 'Pause' : 'Resume'}
          </button>
          <button type="button" class="button-danger" disabled={busy} onClick={onDelete}>
            Delete
          </button>
        </div>
      )}
    </li>
  );
}

/** The last run: when, and the task it created (linked); a skip after it: which run, and why. */
function LastRun({ schedule: s, skip, title }: { schedule: Schedule; skip: BatonEvent | undefined; title: string | undefined }) {
  const skipped = skip && (!s.last_run_at || skip.created_at > s.last_run_at) ? skip : undefined;
  if (!s.last_run_at && !skipped) return <span class="muted">Not run yet</span>;
  const data = skipped?.data ?? {};
  const runs = Array.isArray(data['occurrences']) ? data['occurrences'].filter((at): at is string => typeof at === 'string') : [];
  const latest = runs.at(-1);
  return (
    <>
      {s.last_run_at && s.last_task_id && (
        <span class="schedule-run">
          <time dateTime={s.last_run_at}>{when(s.last_run_at)}</time>: created <a href={`/tasks/${s.last_task_id}`}>{title ?? s.last_task_id}</a>
        </span>
      )}
      {skipped && (
        <span class="schedule-run schedule-skip">
          {latest ? (
            <>
              Skipped {runs.length > 1 ? `${runs.length} runs, the last ` : 'the run of '}
              <time dateTime={latest}>{when(latest)}</time>
            </>
          ) : (
            <>
              Skipped <time dateTime={skipped.created_at}>{when(skipped.created_at)}</time>
            </>
          )}
          : {skipReason(data)}
        </span>
      )}
    </>
  );
}

/** "Thu, Dec 3, 09:00" in the reader's locale and zone: a run's time, precise to the minute. */
function when(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { weekday: 'short', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/** Why a `schedule.skipped` event made no task (src/workers/schedules.ts writes the reasons). */
function skipReason(data: Record<string, unknown>): string {
  const missed = typeof data['missed'] === 'number' ? data['missed'] : 0;
  switch (data['reason']) {
    case 'last_task_open':
      return 'the task it created last was still open';
    case 'missed':
      return `${missed} run${missed === 1 ? '' : 's'} missed while Baton was not running`;
    case 'owner_disabled':
      return 'its creator is disabled';
    case 'refused':
      return `refused: ${typeof data['detail'] === 'string' ? data['detail'] : String(data['code'])}`;
    default:
      return String(data['reason']);
  }
}
