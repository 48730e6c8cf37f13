import { useState } from 'preact/hooks';
import type { InputOf } from '../../../src/client/index.ts';
import type { Agent } from '../types.ts';

type Role = InputOf<'agents_set_role'>['role'];

const ROLE_CHOICES: readonly { value: Role; label: string }[] = [
  { value: 'owner', label: 'Owner: everything, and makes owners' },
  { value: 'admin', label: 'Admin: everything' },
  { value: 'member', label: 'Member: creates, claims, comments, reviews' },
  { value: 'viewer', label: 'Viewer: reads only' },
];

/**
 * A person's role (spec/identity.md "Roles"): the scopes become the role's at their next request.
 * Single sign-on maps a role once, at the first sign-in; after that it is changed here.
 */
export function RoleControl({ agent, busy, onSet }: { agent: Agent; busy: boolean; onSet: (role: Role) => void }) {
  const [role, setRole] = useState<Role>(agent.role ?? 'member');
  return (
    <section class="card" aria-labelledby="role-title">
      <h2 id="role-title">Role</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          onSet(role);
        }}
      >
        <label for="role-select">{agent.role ? `Now ${agent.role}. ` : 'No role yet (scopes set by hand). '}Give the role</label>{' '}
        <select id="role-select" value={role} disabled={busy} onChange={(e) => setRole(e.currentTarget.value as Role)}>
          {ROLE_CHOICES.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>{' '}
        <button type="submit" class="button" disabled={busy || role === agent.role}>
          Set role
        </button>
        <p class="muted small">Replaces the scopes below with the role's. Single sign-on set the first role; it does not change it again.</p>
      </form>
    </section>
  );
}
