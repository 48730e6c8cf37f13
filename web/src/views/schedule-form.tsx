import { useMemo, useState } from 'preact/hooks';
import type { InputOf } from '../../../src/client/index.ts';
import type { Problem } from '../api.ts';
import { cadence } from '../cadence.ts';
import { ProblemNotice } from '../components.tsx';
import { bodyOf, EMPTY_DRAFT, TaskFields } from './task-fields.tsx';
import { initialValues, ParameterField, paramsOf, type Template, TemplateSelect } from './templates.tsx';
import { PrincipalPicker } from '../principal-picker.tsx';
import { AttemptsField } from './new-task-extras.tsx';

type NewSchedule = InputOf<'schedules_create'>;
type Overlap = NonNullable<NewSchedule['overlap']>;

/** Cadences a lead usually wants, to start from; any five-field expression may be typed. */
const PRESETS: readonly { cron: string; label: string }[] = [
  { cron: '0 9 * * 1-5', label: 'Every weekday at 09:00' },
  { cron: '0 9 * * *', label: 'Every day at 09:00' },
  { cron: '0 9 * * 1', label: 'Every Monday at 09:00' },
  { cron: '0 9 1 * *', label: 'On the 1st of every month at 09:00' },
  { cron: '0 * * * *', label: 'Every hour' },
];

const OVERLAP_LABEL: Record<Overlap, string> = {
  skip: 'Skip that run',
  coalesce: 'Hold one run until it closes',
  always: 'Create a task anyway',
};

/** The members the form's fields send, as the server names them (a problem's pointer). */
const POINTERS = ['/name', '/cron', '/time_zone', '/task/assignee', '/template/id', '/catch_up'] as const;

/** The zone this browser is in, the form's default (the server's default is UTC). */
const localZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

function zoneKnown(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The form that creates a schedule: its name, what each run creates (a task with the fields
 * `tasks_create` shares, or a template's tasks with its parameters), the cron expression (read
 * back in words as it is typed) and zone, the overlap and catch-up policies, and whether it starts
 * paused. What the browser can check it checks first, as a convenience; the server's refusal is
 * shown at the field it names, with its hint. `onCreate` answers the problem, or null once created.
 */
export function ScheduleForm({ templates, busy, problem, onDismiss, onCreate, onCancel }: { templates: Template[]; busy: boolean; problem: Problem | null; onDismiss: () => void; onCreate: (input: NewSchedule) => void; onCancel: () => void }) {
  const [name, setName] = useState('');
  const [makes, setMakes] = useState<'task' | 'template'>('task');
  const [draft, setDraft] = useState(EMPTY_DRAFT);
  const [assignee, setAssignee] = useState('');
  const [attempts, setAttempts] = useState('');
  const [templateId, setTemplateId] = useState('');
  const [params, setParams] = useState<Record<string, string>>({});
  const [cron, setCron] = useState(PRESETS[0]?.cron ?? '');
  const [zone, setZone] = useState(localZone);
  const [overlap, setOverlap] = useState<Overlap>('skip');
  const [catchUp, setCatchUp] = useState('0');
  const [paused, setPaused] = useState(false);
  const [checked, setChecked] = useState(false);
  const zones = useMemo(() => Intl.supportedValuesOf('timeZone'), []);
  const template = templates.find((t) => t.id === templateId);

  const words = cadence(cron);
  // The browser's own checks past `required` (which it enforces itself), shown once the form was submitted; the server's beside them.
  const local: Partial<Record<(typeof POINTERS)[number], string>> = {
    ...(cron.trim().split(/\s+/).length === 5 ? {} : { '/cron': 'Give five fields: minute hour day-of-month month day-of-week.' }),
    ...(zoneKnown(zone) ? {} : { '/time_zone': 'Name an IANA time zone, such as Europe/Berlin.' }),
  };
  const served = Object.fromEntries((problem?.errors ?? []).map((e) => [e.pointer, e.detail]));
  const errorAt = (pointer: (typeof POINTERS)[number]) => (checked ? local[pointer] : undefined) ?? served[pointer];
  // Field errors show at their fields; the notice keeps the rest, the detail and the hint.
  const notice = problem && { ...problem, errors: (problem.errors ?? []).filter((e) => !(POINTERS as readonly string[]).includes(e.pointer)) };

  const submit = (event: Event) => {
    event.preventDefault();
    setChecked(true);
    if (Object.keys(local).length > 0) return;
    const { blocked_by: _none, ...task } = bodyOf(draft);
    onCreate({
      name: name.trim(),
      cron: cron.trim(),
      time_zone: zone,
      overlap,
      catch_up: Number(catchUp),
      enabled: !paused,
      ...(makes === 'task'
        ? { task: { ...task, ...(assignee ? { assignee } : {}), ...(attempts ? { max_attempts: Number(attempts) } : {}) } }
        : { template: { id: templateId, params: paramsOf(params) } }),
    });
  };
  const field = (id: string, pointer: (typeof POINTERS)[number]) => {
    const error = errorAt(pointer);
    return { id, 'aria-invalid': error ? true : undefined, 'aria-describedby': error ? `${id}-error` : undefined };
  };
  const error = (id: string, pointer: (typeof POINTERS)[number]) => {
    const text = errorAt(pointer);
    return text ? (
      <p id={`${id}-error`} class="field-error">
        {text}
      </p>
    ) : null;
  };

  return (
    <form class="card schedule-form" onSubmit={submit} aria-labelledby="new-schedule-title">
      <h2 id="new-schedule-title">New schedule</h2>
      {notice && <ProblemNotice problem={notice} onDismiss={onDismiss} />}
      <div class="field">
        <label for="schedule-name">Name</label>
        <input {...field('schedule-name', '/name')} required maxLength={200} placeholder="Weekly dependency review" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        {error('schedule-name', '/name')}
      </div>

      <fieldset>
        <legend>Each run creates</legend>
        <label class="choice">
          <input type="radio" name="schedule-makes" checked={makes === 'task'} onChange={() => setMakes('task')} /> A task
        </label>
        <label class="choice">
          <input type="radio" name="schedule-makes" checked={makes === 'template'} disabled={templates.length === 0} onChange={() => setMakes('template')} /> A template’s tasks
          {templates.length === 0 && <span class="muted small"> (no templates yet)</span>}
        </label>
        {makes === 'task' ? (
          <div class="schedule-fields">
            <TaskFields prefix="schedule-task" draft={draft} onChange={setDraft} blockers={false} />
            <div class="field">
              <label for="schedule-assignee">Assignee</label>
              <PrincipalPicker id="schedule-assignee" invalid={Boolean(errorAt('/task/assignee'))} describedBy={errorAt('/task/assignee') ? 'schedule-assignee-error' : undefined} value={assignee} onChange={setAssignee} fixed={[{ value: '', label: 'Anyone may claim it' }]} />
              {error('schedule-assignee', '/task/assignee')}
            </div>
            <AttemptsField id="schedule-attempts" value={attempts} onChange={setAttempts} />
          </div>
        ) : (
          <div class="schedule-fields">
            <div class="field">
              <label for="schedule-template">Template</label>
              <TemplateSelect
                {...field('schedule-template', '/template/id')}
                required
                templates={templates}
                value={templateId}
                onChange={(id) => {
                  setTemplateId(id);
                  setParams(initialValues(templates.find((t) => t.id === id)));
                }}
              />
              {error('schedule-template', '/template/id')}
            </div>
            {template?.parameters.map((p) => (
              <ParameterField key={`${template.id}-${p.name}`} prefix="schedule-param" parameter={p} value={params[p.name] ?? ''} onChange={(v) => setParams({ ...params, [p.name]: v })} />
            ))}
          </div>
        )}
      </fieldset>

      <fieldset>
        <legend>When</legend>
        <div class="field-row">
          <div class="field field-grow schedule-cron">
            <label for="schedule-cron">Cron expression</label>
            <input {...field('schedule-cron', '/cron')} class="mono" required spellcheck={false} value={cron} onInput={(e) => setCron(e.currentTarget.value)} aria-describedby={errorAt('/cron') ? 'schedule-cron-error' : 'schedule-cron-words'} />
            <p id="schedule-cron-words" class="small muted" aria-live="polite">
              {words ? `Runs ${words}` : 'Five fields: minute hour day month weekday'}
            </p>
            {error('schedule-cron', '/cron')}
          </div>
          <div class="field field-grow">
            <label for="schedule-preset">Common cadences</label>
            <select id="schedule-preset" value={PRESETS.some((p) => p.cron === cron) ? cron : ''} onChange={(e) => e.currentTarget.value && setCron(e.currentTarget.value)}>
              <option value="">Custom</option>
              {PRESETS.map((p) => (
                <option key={p.cron} value={p.cron}>
                  {p.label}
                </option>
              ))}
            </select>
          </div>
          <div class="field field-grow">
            <label for="schedule-zone">Time zone</label>
            <input {...field('schedule-zone', '/time_zone')} list="schedule-zones" required value={zone} onInput={(e) => setZone(e.currentTarget.value)} />
            <datalist id="schedule-zones">
              {zones.map((z) => (
                <option key={z} value={z} />
              ))}
            </datalist>
            {error('schedule-zone', '/time_zone')}
          </div>
        </div>
      </fieldset>

      <div class="field-row">
        <div class="field field-grow">
          <label for="schedule-overlap">While the last task is still open</label>
          <select id="schedule-overlap" value={overlap} onChange={(e) => setOverlap(e.currentTarget.value as Overlap)}>
            {Object.entries(OVERLAP_LABEL).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div class="field field-grow">
          <label for="schedule-catch-up">Runs to make up after downtime</label>
          <input {...field('schedule-catch-up', '/catch_up')} type="number" min={0} max={100} value={catchUp} onInput={(e) => setCatchUp(e.currentTarget.value)} />
          {error('schedule-catch-up', '/catch_up')}
        </div>
      </div>
      <label class="choice">
        <input type="checkbox" checked={paused} onChange={(e) => setPaused(e.currentTarget.checked)} /> Start paused
      </label>
      <div class="dialog-actions">
        <button type="submit" class="button-primary" disabled={busy}>
          Create schedule
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
