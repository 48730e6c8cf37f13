import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

/**
 * A secret the server shows once (a new token, a webhook's signing secret): a read-only field, a
 * copy button, and the warning that it will not be shown again; `onDone` when the person has it.
 */
export function SecretOnce({ label, value, testId, children, onDone }: { label: string; value: string; testId: string; children: ComponentChildren; onDone: () => void }) {
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('yes');
    } catch {
      // No clipboard access (an http origin, a denied permission): the field is there to copy by hand.
      setCopied('no');
    }
  };
  return (
    <div class="notice notice-secret" role="alert">
      <strong>Copy this {label.toLowerCase()} now. It will not be shown again.</strong>
      {children}
      <div class="secret-row">
        <input readOnly aria-label={label} value={value} data-testid={testId} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" class="button-primary" onClick={() => void copy()}>
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
      </div>
      {copied === 'no' && <p>The browser refused the clipboard: select the {label.toLowerCase()} above and copy it by hand.</p>}
      <button type="button" class="button-quiet" onClick={onDone}>
        I have stored it
      </button>
    </div>
  );
}
