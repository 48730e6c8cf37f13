import DOMPurify from 'dompurify';
import { Marked } from 'marked';
import { useLayoutEffect, useRef } from 'preact/hooks';

/** What a rendered description or comment may contain: text structure, code, links; no raw HTML, images, forms or styles. */
const ALLOWED_TAGS = ['p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 'del', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'a', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'input'];
const ALLOWED_ATTR = ['href', 'title', 'type', 'checked', 'disabled', 'start', 'align'];

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * Markdown (GitHub flavour) to a sanitised fragment. Raw HTML in the source is shown as text, not
 * parsed; DOMPurify then keeps only ALLOWED_TAGS/ALLOWED_ATTR and safe URL schemes; every link opens
 * in a new tab with `rel="noopener noreferrer"`.
 */
export function renderMarkdown(source: string): DocumentFragment {
  const marked = new Marked({ gfm: true, breaks: true, async: false, renderer: { html: ({ text }) => escapeHtml(text) } });
  const html = marked.parse(source, { async: false });
  const fragment = DOMPurify.sanitize(html, { ALLOWED_TAGS, ALLOWED_ATTR, RETURN_DOM_FRAGMENT: true });
  for (const link of fragment.querySelectorAll('a')) {
    link.setAttribute('rel', 'noopener noreferrer');
    link.setAttribute('target', '_blank');
  }
  // Task-list checkboxes are display only.
  for (const box of fragment.querySelectorAll('input')) {
    if (box.getAttribute('type') !== 'checkbox') box.remove();
    else box.setAttribute('disabled', '');
  }
  return fragment;
}

/** Characters Markdown gives a meaning to (emphasis, code, links, headings, quotes, lists, tables, entities). */
const MARKS = /[*_`[\]#>~|&<\\]|^\s*([-+]|\d+\.)\s/m;
/** Block elements, whose text a quote joins with a space. */
const BLOCKS = 'p, li, h1, h2, h3, h4, h5, h6, pre, blockquote, tr, th, td, br';

/**
 * What a reader sees of Markdown, as one line of plain text (a timeline's quote): `**EU**` is "EU",
 * a link its words, code its text; blocks joined by a space.
 */
export function markdownText(source: string): string {
  // Most quotes are plain sentences: only a mark Markdown acts on is worth a render.
  if (!MARKS.test(source)) return source;
  const fragment = renderMarkdown(source);
  for (const block of fragment.querySelectorAll(BLOCKS)) block.after(' ');
  return fragment.textContent ?? '';
}

/** Rendered Markdown (a description, a comment, a hand-in summary); the sanitised nodes are placed with the DOM, never as an HTML string. */
export function Markdown({ source, class: extra }: { source: string; class?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    ref.current?.replaceChildren(renderMarkdown(source));
  }, [source]);
  return <div class={extra ? `markdown ${extra}` : 'markdown'} ref={ref} />;
}
