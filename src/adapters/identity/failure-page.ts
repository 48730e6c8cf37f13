import type { BatonError } from '../../errors.ts';

/** Who can do something about a failed sign-in, and what the page tells the person. */
interface Advice {
  readonly heading: string;
  readonly text: string;
  readonly retry: boolean;
}

/** Errors of the provider (RFC 6749 §5.2, OpenID Core §3.1.2.6) that mean this server's client registration is wrong, not the person. */
const SETUP_ERRORS = new Set(['invalid_client', 'unauthorized_client', 'unsupported_grant_type', 'unsupported_response_type', 'invalid_scope', 'invalid_request']);

/**
 * What a person sees when a sign-in started in their browser fails (spec/identity.md, "Refusals"):
 * a page that says what happened and who can fix it, the problem's code and detail for whoever
 * they ask, and the way back to the sign-in page. A script asking for JSON still gets the problem.
 */
export function signInFailurePage(error: BatonError, providerName: string): string {
  const advice = adviceFor(error, providerName);
  const links = [advice.retry ? '<a href="/auth/oidc/login">Try again</a>' : '', '<a href="/">Back to the sign-in page</a>'].filter(Boolean).join(' · ');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(advice.heading)} · Baton</title>
<style>body{font:16px/1.5 system-ui,sans-serif;background:#f5f6f8;color:#1d2330;margin:0}main{max-width:36rem;margin:12vh auto;background:#fff;border:1px solid #d8dce3;border-radius:8px;padding:1.5rem 2rem}h1{font-size:1.3rem;margin:0 0 .75rem}dl{font-size:.9rem;color:#4a5263;background:#f5f6f8;padding:.75rem 1rem;border-radius:6px}dt{font-weight:600}dd{margin:0 0 .5rem;overflow-wrap:anywhere}a{color:#1f4fd1}</style>
</head><body><main data-code="${escapeHtml(error.code)}">
<h1>${escapeHtml(advice.heading)}</h1>
<p>${escapeHtml(advice.text)}</p>
<dl><dt>Error code</dt><dd class="code">${escapeHtml(error.code)}</dd><dt>Details (for your administrator)</dt><dd class="detail">${escapeHtml(error.detail)}</dd></dl>
<p>${links}</p>
</main></body></html>`;
}

function adviceFor(error: BatonError, providerName: string): Advice {
  const provider = providerName === 'single sign-on' ? 'your sign-in provider' : providerName;
  const admin = 'whoever runs this Baton server';
  const providerError = error.extra['provider_error'];
  if (error.code === 'unavailable') {
    return { heading: `${capitalize(provider)} cannot be reached`, text: `Baton could not reach ${provider} to sign you in. Try again in a few minutes; if it keeps happening, tell ${admin}.`, retry: true };
  }
  if (error.code === 'route_not_found') return { heading: 'Single sign-on is off on this server', text: 'Sign in with a Baton token instead.', retry: false };
  if (error.extra['reason'] === 'disabled') return { heading: 'Your Baton account is disabled', text: `An admin of this Baton server disabled your account, so ${provider} vouching for you is not enough. Ask ${admin} to enable it.`, retry: false };
  if (providerError === 'access_denied') {
    return { heading: `${capitalize(provider)} did not let you in`, text: `You cancelled the sign-in, or your account may not use Baton at ${provider}. Ask ${admin} for access if you need it.`, retry: true };
  }
  if (typeof providerError === 'string' && SETUP_ERRORS.has(providerError)) {
    return { heading: 'Single sign-on is not set up correctly', text: `${capitalize(provider)} refused this Baton server's own credentials or request, so nobody can sign in this way until it is fixed. There is nothing you can change: tell ${admin} (the details below are for them, and are in the server's log too).`, retry: false };
  }
  return { heading: 'Sign-in failed', text: `Nothing was recorded. Start again; if it fails the same way, tell ${admin} what the details below say.`, retry: true };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
