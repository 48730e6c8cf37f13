import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../action.ts';
import type { InputOf, OutputOf } from '../../../src/client/index.ts';
import { getAll, type ItemOf, type Problem, problemOf } from '../api.ts';
import { Loading, ProblemNotice } from '../components.tsx';

/** A parameter as templates_create takes it, with the defaults the server fills in (its list answers them untyped). */
type Declared = NonNullable<InputOf<'templates_create'>['parameters']>[number];
type Parameter = Declared & { type: NonNullable<Declared['type']>; required: boolean };
export type Template = Omit<ItemOf<'templates_list'>, 'parameters'> & { parameters: Parameter[] };
/** What templates_instantiate answers: the rendered graph (with dry_run) or the tasks it made. */
type Instantiation = OutputOf<'templates_instantiate'>;

/** A template's parameter fields as a form starts them: each default, or a required enum's first value. */
export const initialValues = (template: Template | undefined): Record<string, string> =>
  Object.fromEntries((template?.parameters ?? []).map((p) => [p.name, p.default === undefined ? (p.type === 'enum' && p.required ? (p.values?.[0] ?? '') : '') : String(p.default)]));

/** The `params` to send: empty fields are left out, so the template's defaults (or "required") apply. */
export const paramsOf = (values: Record<string, string>) => Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ''));

/**
 * Templates: pick one, fill the form its declared parameters make (a select for an enum, a number
 * field for a number, required ones marked), preview the rendered graph (templates_instantiate with
 * dry_run), then create every task at once. The preview and the creation send the same values.
 */
export function Templates() {
  const [templates, setTemplates] = useState<Template[] | null>(null);
  const [loadProblem, setLoadProblem] = useState<Problem | null>(null);
  const [chosen, setChosen] = useState<string>('');
  const [values, setValues] = useState<Record<string, string>>({});
  const [shown, setShown] = useState<Instantiation | null>(null);
  const action = useAction();
  const load = () =>
    getAll('templates_list', {}).then(
      (res) => {
        setTemplates(res.data as Template[]);
        setLoadProblem(null);
      },
      (error: unknown) => setLoadProblem(problemOf(error)),
    );
  useEffect(() => void load(), []);
  const template = templates?.find((t) => t.id === chosen);
  const pick = (id: string) => {
    setChosen(id);
    setShown(null);
    action.dismiss();
    const next = templates?.find((t) => t.id === id);
    setValues(initialValues(next));
  };
  const params = paramsOf(values);
  const send = (dryRun: boolean) => void action.send({ operation: 'templates_instantiate', input: { id: chosen, params, dry_run: dryRun } }, (answer) => setShown(answer));

  return (
    <section class="page" aria-labelledby="templates-title">
      <h1 id="templates-title">Templates</h1>
      <p class="muted">Make a whole graph of tasks at once: pick a template, fill its parameters, preview, create.</p>
      {loadProblem && <ProblemNotice problem={loadProblem} onRetry={() => void load()} />}
      {!templates ? (
        !loadProblem && <Loading what="templates" />
      ) : templates.length === 0 ? (
        <p class="muted">
          No templates yet: save one with <code>baton templates create file.yaml</code> or <code>POST /api/v1/templates</code>.
        </p>
      ) : (
        <form
          class="card template-form"
          onSubmit={(e) => {
            e.preventDefault();
            send(false);
          }}
        >
          <div class="field">
            <label for="template-pick">Template</label>
            <TemplateSelect id="template-pick" templates={templates} value={chosen} onChange={pick} />
          </div>
          {template?.description && <p class="muted">{template.description}</p>}
          {template?.parameters.map((p) => (
            <ParameterField key={`${template.id}-${p.name}`} parameter={p} value={values[p.name] ?? ''} onChange={(v) => setValues({ ...values, [p.name]: v })} />
          ))}
          {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
          {template && (
            <div class="dialog-actions">
              <button type="button" disabled={action.busy} onClick={() => send(true)}>
                Preview
              </button>
              <button type="submit" class="button-primary" disabled={action.busy}>
                Create {template.tasks.length} tasks
              </button>
            </div>
          )}
        </form>
      )}
      {shown && <Graph answer={shown} />}
    </section>
  );
}

/** A choice of template, each with how many tasks it makes; `rest` carries the field's ARIA state. */
export function TemplateSelect({ templates, onChange, ...rest }: { id: string; templates: Template[]; value: string; onChange: (id: string) => void; required?: boolean; 'aria-invalid'?: boolean; 'aria-describedby'?: string }) {
  return (
    <select {...rest} onChange={(e) => onChange(e.currentTarget.value)}>
      <option value="">Choose a template…</option>
      {templates.map((t) => (
        <option key={t.id} value={t.id}>
          {t.name} ({t.tasks.length} tasks)
        </option>
      ))}
    </select>
  );
}

/** One parameter's field; `prefix` keeps its id apart from another form's on the same page. */
export function ParameterField({ parameter: p, value, onChange, prefix = 'template-param' }: { parameter: Parameter; value: string; onChange: (value: string) => void; prefix?: string }) {
  const id = `${prefix}-${p.name}`;
  const required = p.required && p.default === undefined;
  const hint = p.description ? `${id}-hint` : undefined;
  return (
    <div class="field">
      <label for={id}>
        {p.name}
        {required && <span class="muted small"> (required)</span>}
      </label>
      {p.type === 'enum' ? (
        <select id={id} value={value} required={required} aria-describedby={hint} onChange={(e) => onChange(e.currentTarget.value)}>
          {!required && <option value="">{p.default === undefined ? '(none)' : `Default (${p.default})`}</option>}
          {(p.values ?? []).map((v) => (
            <option key={v} value={v}>
              {v}
            </option>
          ))}
        </select>
      ) : (
        <input
          id={id}
          type="text"
          inputMode={p.type === 'number' ? 'decimal' : 'text'}
          value={value}
          required={required}
          maxLength={200}
          placeholder={p.default === undefined ? '' : String(p.default)}
          aria-describedby={hint}
          onInput={(e) => onChange(e.currentTarget.value)}
        />
      )}
      {hint && (
        <span id={hint} class="muted small">
          {p.description}
        </span>
      )}
    </div>
  );
}

/** The rendered graph as an indented list, subtasks under their parent, each with its blockers and gates. */
function Graph({ answer }: { answer: Instantiation }) {
  const titles = new Map(answer.tasks.map((t) => [t.key, t.title]));
  const level = (parent: string | null) => answer.tasks.filter((t) => t.parent === parent);
  const list = (parent: string | null) => (
    <ul class="template-graph">
      {level(parent).map((t) => (
        <li key={t.key} data-template-key={t.key}>
          {t.id ? <a href={`/tasks/${t.id}`}>{t.title}</a> : <span>{t.title}</span>}
          {t.approval && <span class="status status-in_review">Approval gate</span>}
          {t.blocked_by.length > 0 && <span class="muted small"> — blocked by {t.blocked_by.map((b) => titles.get(b) ?? b).join(', ')}</span>}
          {t.not_before && <span class="muted small"> — not before {new Date(t.not_before).toLocaleString()}</span>}
          {level(t.key).length > 0 && list(t.key)}
        </li>
      ))}
    </ul>
  );
  return (
    <section class="card" aria-labelledby="template-graph-title">
      <h2 id="template-graph-title">{answer.dry_run ? 'Preview' : `Created ${Object.keys(answer.task_ids).length} tasks`}</h2>
      {answer.dry_run && <p class="muted">Nothing is written until you create it.</p>}
      {list(null)}
    </section>
  );
}
