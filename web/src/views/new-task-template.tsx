import { useEffect, useState } from 'preact/hooks';
import { getAll } from '../api.ts';
import { initialValues, ParameterField, type Template } from './templates.tsx';

/** The template "New task" makes its tasks from instead (null: a single task from the fields), with its parameters. */
export interface TemplateChoice {
  template: Template;
  values: Record<string, string>;
}

/**
 * "New task"'s template field: a select of the workspace's templates (shown only when there are
 * any); picking one replaces the task's fields with the template's parameters, and Create makes the
 * whole graph (`templates_instantiate`), as the templates page does.
 */
export function TemplateField({ choice, onChange }: { choice: TemplateChoice | null; onChange: (choice: TemplateChoice | null) => void }) {
  const [templates, setTemplates] = useState<Template[]>([]);
  useEffect(() => {
    getAll('templates_list', {}).then(
      (res) => setTemplates(res.data as Template[]),
      () => setTemplates([]),
    );
  }, []);
  if (templates.length === 0) return null;
  const pick = (id: string) => {
    const template = templates.find((t) => t.id === id);
    onChange(template ? { template, values: initialValues(template) } : null);
  };
  return (
    <>
      <div class="field">
        <label for="new-task-template">Template</label>
        <select id="new-task-template" value={choice?.template.id ?? ''} onChange={(e) => pick(e.currentTarget.value)}>
          <option value="">None: one task from these fields</option>
          {templates.map((t) => (
            <option key={t.id} value={t.id}>
              {t.name} ({t.tasks.length} tasks)
            </option>
          ))}
        </select>
      </div>
      {choice?.template.parameters.map((p) => (
        <ParameterField
          key={`${choice.template.id}-${p.name}`}
          prefix="new-task-param"
          parameter={p}
          value={choice.values[p.name] ?? ''}
          onChange={(v) => onChange({ ...choice, values: { ...choice.values, [p.name]: v } })}
        />
      ))}
    </>
  );
}
