import { useState } from 'preact/hooks';
import type { InputOf } from '../../../src/client/index.ts';
import { useSession } from '../session.ts';

/** What the form edits of a principal (`agents_create`'s input): tool_allowlist null is every operation its scopes allow. */
export type PrincipalFields = Required<Pick<InputOf<'agents_create'>, 'name' | 'scopes' | 'tool_allowlist'>>;

/** Name, scopes and toolAllowlist, as checkboxes (keyboard usable); used to create and to edit. */
export function PrincipalForm({ initial, submitLabel, busy, onSubmit, children }: {
  initial: PrincipalFields;
  submitLabel: string;
  busy: boolean;
  onSubmit: (fields: PrincipalFields) => void;
  children?: preact.ComponentChildren;
}) {
  const { manifest } = useSession();
  const [name, setName] = useState(initial.name);
  const [scopes, setScopes] = useState(new Set<string>(initial.scopes));
  const [restricted, setRestricted] = useState(initial.tool_allowlist !== null);
  const [allowed, setAllowed] = useState(new Set(initial.tool_allowlist ?? []));
  const toggle = (set: Set<string>, item: string, on: boolean) => {
    const next = new Set(set);
    if (on) next.add(item);
    else next.delete(item);
    return next;
  };
  const submit = (event: Event) => {
    event.preventDefault();
    const ops = manifest.operations.map((o) => o.name).filter((n) => allowed.has(n));
    onSubmit({ name: name.trim(), scopes: manifest.auth.scopes.filter((s) => scopes.has(s)), tool_allowlist: restricted ? ops : null });
  };
  return (
    <form class="principal-form" onSubmit={submit}>
      <label for="principal-name">Name</label>
      <input id="principal-name" value={name} maxLength={100} required onInput={(e) => setName(e.currentTarget.value)} />
      {children}
      <fieldset>
        <legend>Scopes</legend>
        <div class="checks">
          {manifest.auth.scopes.map((scope) => (
            <label key={scope} class="check">
              <input type="checkbox" checked={scopes.has(scope)} onChange={(e) => setScopes(toggle(scopes, scope, e.currentTarget.checked))} />
              <code>{scope}</code>
            </label>
          ))}
        </div>
      </fieldset>
      <fieldset>
        <legend>Tool allowlist</legend>
        <label class="check">
          <input type="checkbox" checked={restricted} onChange={(e) => setRestricted(e.currentTarget.checked)} />
          Only these operations (otherwise: every operation its scopes allow)
        </label>
        {restricted && (
          <div class="checks checks-ops">
            {manifest.operations.map((op) => (
              <label key={op.name} class="check" title={op.summary}>
                <input type="checkbox" checked={allowed.has(op.name)} onChange={(e) => setAllowed(toggle(allowed, op.name, e.currentTarget.checked))} />
                <code>{op.name}</code>
              </label>
            ))}
          </div>
        )}
      </fieldset>
      <button type="submit" class="button-primary" disabled={busy}>
        {submitLabel}
      </button>
    </form>
  );
}
