/**
 * The dashboard's only script, served by the service as a file (`LIVE_SCRIPT_PATH`, under the
 * pages' `script-src 'self'`): it opens the page's event stream (`data-live`) and puts each section
 * the server sends, already rendered and escaped like the first paint, in place of the old one
 * (a focused link or button in it stays focused), or, for a log, adds the new lines at its end.
 * No framework: EventSource reconnects by itself, and the server does all the rendering.
 */
import { createHash } from 'node:crypto';

export const LIVE_SCRIPT = `'use strict';
(function () {
  var root = document.querySelector('[data-live]');
  var status = document.getElementById('live-status');
  if (!root || !window.EventSource) return;
  var say = function (text) { if (status) status.textContent = text; };
  var source = new EventSource(root.getAttribute('data-live'));
  source.addEventListener('open', function () { say('Live'); });
  source.addEventListener('section', function (e) {
    var s = JSON.parse(e.data);
    var el = document.getElementById(s.id);
    if (!el) return;
    // A focused link or button inside the section keeps the focus: the one of the same href or label in the new section takes it.
    var focused = document.activeElement;
    var key = focused && el.contains(focused) ? ['href', 'aria-label'].find(function (a) { return focused.hasAttribute(a); }) : null;
    var selector = key && '[' + key + '="' + CSS.escape(focused.getAttribute(key)) + '"]';
    el.innerHTML = s.html;
    var again = selector && el.querySelector(selector);
    if (again) again.focus();
  });
  // A log's new lines: added at the end, the oldest dropped beyond the element's data-keep.
  source.addEventListener('append', function (e) {
    var s = JSON.parse(e.data);
    var el = document.getElementById(s.id);
    if (!el) return;
    var placeholder = el.querySelector(':scope > .muted');
    if (placeholder) placeholder.remove();
    el.insertAdjacentHTML('beforeend', s.html);
    var keep = Number(el.getAttribute('data-keep')) || 1000;
    while (el.childElementCount > keep) el.firstElementChild.remove();
  });
  source.addEventListener('end', function (e) { say('Not live: ' + e.data); source.close(); });
  source.addEventListener('error', function () { say(source.readyState === 2 ? 'Not live: reload the page' : 'Reconnecting'); });
})();
`;

/** Named by its content, so browsers may keep it for good. */
export const LIVE_SCRIPT_PATH = `/assets/live-${createHash('sha256').update(LIVE_SCRIPT).digest('hex').slice(0, 12)}.js`;
