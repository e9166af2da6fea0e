/**
 * A namespace's sleep as Home and its page show it (pure): the Sleep or Wake button for a user
 * who may (its owner or an admin: namespaces/actions.ts), and the service's announcement of the
 * automatic sleep and deletion of an idle namespace (the Namespace body's sleepsAt, deletesAt).
 */
import { csrfField, html, type Html } from '../pages/html.ts';
import { when } from './model.ts';

export interface SleepView {
  /** Sleeping or Waking; absent when awake. */
  sleep?: 'Sleeping' | 'Waking';
  /** The viewer may put it to sleep or wake it here (its owner or an admin, not a preview, not going). */
  sleepable: boolean;
  sleepsAt?: string;
  deletesAt?: string;
}

/** "sleeps at ..., deleted at ... unless used", as the service announced them; empty when it did not. */
export function announcement(n: { sleepsAt?: string; deletesAt?: string }): Html | '' {
  const parts = [...(n.sleepsAt ? [html`sleeps at ${when(n.sleepsAt)}`] : []), ...(n.deletesAt ? [html`deleted at ${when(n.deletesAt)}`] : [])];
  if (parts.length === 0) return '';
  return html`<span class="muted" data-announcement>${parts.length === 2 ? html`${parts[0]}, ${parts[1]}` : parts[0]} unless used</span>`;
}

/**
 * Wake for a sleeping namespace, Sleep otherwise (a waking one may go back to sleep), posting to
 * `action` + /sleep or /wake; `back` is where the answer returns to. Empty without a form to show.
 */
export function sleepButton(name: string, v: SleepView, csrf: string | undefined, action: string, back?: string): Html | '' {
  if (!v.sleepable || csrf === undefined) return '';
  const [verb, text, label] = v.sleep === 'Sleeping' ? ['wake', 'Wake', `Wake ${name}`] : ['sleep', 'Sleep', `Sleep ${name}`];
  const backField = back ? html`<input type="hidden" name="back" value="${back}">` : '';
  const button = html`<button aria-label="${label}">${text}</button>`;
  return html`<form class="inline" method="post" action="${action}/${verb}">${csrfField(csrf)}${backField}${button}</form>`;
}
