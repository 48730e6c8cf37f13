import { useEffect, useState } from 'preact/hooks';
import { useDisclosure } from './hooks.ts';
import { call, getToken, type Problem, problemOf, switchWorkspace } from './api.ts';
import { ProblemNotice } from './components.tsx';
import { useRoute } from './router.ts';
import { can, useSession } from './session.ts';
import type { Workspace } from './types.ts';

/**
 * The top bar's workspace: its name always; for a person signed in with single sign-on who belongs
 * to more than one, a disclosure of the others, each a button that moves this browser's session
 * there and loads the app afresh (everything shown was the old workspace's). A pasted token belongs
 * to one workspace, so it shows the name only. Plain buttons rather than a `<select>`, whose arrow
 * keys would switch before the person chose; Escape closes and gives focus back to the toggle.
 */
export function WorkspaceSwitcher() {
  const { whoami } = useSession();
  const route = useRoute();
  const [workspaces, setWorkspaces] = useState<Workspace[] | null>(null);
  const { open, setOpen, toggle, list, containerProps } = useDisclosure();
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  useEffect(() => {
    if (!can({ whoami }, 'workspaces_list')) return;
    void call('workspaces_list', {}).then(
      (page) => setWorkspaces(page.data),
      () => undefined,
    );
  }, []);

  const current = workspaces?.find((w) => w.current);
  if (!workspaces || !current) return null;
  const others = getToken() === null ? workspaces.filter((w) => !w.current) : [];
  if (others.length === 0) {
    return (
      <span class="workspace-name" title="Workspace">
        <span class="sr-only">Workspace: </span>
        {current.name}
      </span>
    );
  }
  const choose = async (to: Workspace) => {
    setBusy(true);
    setProblem(null);
    try {
      await switchWorkspace(to.id);
      // A task or person of the old workspace is not in the new one: its board instead.
      if (route.page === 'task' || route.page === 'agent') location.assign('/');
      else location.reload();
    } catch (error) {
      setProblem(problemOf(error));
      setBusy(false);
    }
  };
  return (
    <div class="workspace-menu" {...containerProps}>
      <button ref={toggle} type="button" class="workspace-toggle" aria-expanded={open} aria-controls={open ? 'workspace-options' : undefined} onClick={() => setOpen(!open)}>
        <span class="sr-only">Workspace: </span>
        <span class="workspace-toggle-name">{current.name}</span>
      </button>
      {open && (
        <div id="workspace-options" ref={list} class="workspace-options" role="group" aria-labelledby="workspace-options-label">
          <span id="workspace-options-label" class="workspace-options-label">
            Switch to workspace
          </span>
          {others.map((w) => (
            <button key={w.id} type="button" class="workspace-option" disabled={busy} onClick={() => void choose(w)}>
              {w.name}
            </button>
          ))}
          {busy && (
            <p class="muted small" role="status">
              Switching…
            </p>
          )}
          {problem && <ProblemNotice problem={problem} />}
        </div>
      )}
    </div>
  );
}
