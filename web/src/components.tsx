import { type ComponentChildren, createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Problem } from './api.ts';
import { STATUS_LABEL } from './format.ts';
import { useNames } from './directory.ts';
import type { Actor, Priority, Status } from './types.ts';

const KIND_LABEL = { human: 'Human', agent: 'Agent', system: 'System' } as const;

/** Who did something, with their kind visibly distinct: colour, a glyph and a text label. */
export function ActorChip({ actor }: { actor: Actor }) {
  const names = useNames(actor.kind === 'system' ? [] : [actor.id]);
  const name = actor.kind === 'system' ? 'Baton' : (names.get(actor.id) ?? actor.id);
  return (
    <span class={`actor actor-${actor.kind}`} title={`${KIND_LABEL[actor.kind]} ${actor.id}`}>
      <span class="actor-kind">{KIND_LABEL[actor.kind]}</span>
      <span class="actor-name">{name}</span>
    </span>
  );
}

export function StatusBadge({ status }: { status: Status }) {
  return <span class={`status status-${status}`}>{STATUS_LABEL[status]}</span>;
}

export function PriorityBadge({ priority }: { priority: Priority }) {
  return <span class={`priority priority-${priority}`}>{priority}</span>;
}

export function Labels({ labels }: { labels: string[] }) {
  if (labels.length === 0) return null;
  return (
    <ul class="labels" aria-label="Labels">
      {labels.map((label) => (
        <li key={label} class="label">
          {label}
        </li>
      ))}
    </ul>
  );
}

/** Server text with `code` spans (hints use them for names and routes) rendered as code. */
export function RichText({ text }: { text: string }) {
  return <>{text.split('`').map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : part))}</>;
}

/** A problem in plain words: what went wrong (detail), what to do (hint), field by field when given. */
export function ProblemNotice({ problem, onDismiss, onRetry, children }: { problem: Problem; onDismiss?: () => void; onRetry?: () => void; children?: ComponentChildren }) {
  return (
    <div class="notice notice-problem" role="alert">
      <div class="notice-body">
        <strong class="notice-title">{problem.title}</strong>
        {problem.detail && (
          <p class="notice-detail">
            <RichText text={problem.detail} />
          </p>
        )}
        {problem.errors && problem.errors.length > 0 && (
          <ul class="notice-errors">
            {problem.errors.map((e) => (
              <li key={e.pointer}>{e.detail}</li>
            ))}
          </ul>
        )}
        {problem.hint && (
          <p class="notice-hint">
            <RichText text={problem.hint} />
          </p>
        )}
        {children}
        {onRetry && (
          <div class="notice-actions">
            <button type="button" class="button-primary" onClick={onRetry}>
              Try again
            </button>
          </div>
        )}
      </div>
      {onDismiss && (
        <button type="button" class="button-quiet" onClick={onDismiss} aria-label="Dismiss">
          ✕
        </button>
      )}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** Loads the current page again from scratch; the shell provides it (it remounts the page). */
export const RetryContext = createContext<() => void>(() => location.reload());

/** A page that could not load: what went wrong, Try again, and a way back to the board. */
export function PageProblem({ problem, onRetry }: { problem: Problem; onRetry?: () => void }) {
  const remount = useContext(RetryContext);
  return (
    <section class="page" aria-labelledby="page-problem-title">
      <h1 id="page-problem-title" class="page-problem-title">This page could not load</h1>
      <ProblemNotice problem={problem} onRetry={onRetry ?? remount} />
      {location.pathname !== '/' && (
        <p>
          <a href="/">Back to the board</a>
        </p>
      )}
    </section>
  );
}
