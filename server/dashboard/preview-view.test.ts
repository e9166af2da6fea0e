/** A preview's facts and buttons: the source a link only for http(s), buttons only as the rules allow. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { previewButtons, previewFacts, type PreviewView, sourceLink } from './preview-view.ts';

const BASE: PreviewView = { scope: 'global', sleeping: false, destroying: false, mayRedeploy: false, maySleep: false, mayDestroy: false };

describe('preview view', () => {
  test('the source is a link for http and https only', () => {
    assert.equal(sourceLink('https://git.example/shop/pull/7').text, '<a href="https://git.example/shop/pull/7">https://git.example/shop/pull/7</a>');
    assert.equal(sourceLink('http://x.example').text, '<a href="http://x.example">http://x.example</a>');
    for (const bad of ['javascript:alert(1)', 'data:text/html,<b>', '//evil.example', 'JAVASCRIPT:x']) {
      assert.doesNotMatch(sourceLink(bad).text, /<a /, bad);
    }
    assert.equal(sourceLink('data:text/html,<b>').text, '<code>data:text/html,&lt;b&gt;</code>');
  });

  test('scope and source', () => {
    assert.equal(
      previewFacts({ ...BASE, sourceUrl: 'https://s.example' }).text,
      '<span class="muted">global preview</span> · source <a href="https://s.example">https://s.example</a>',
    );
    assert.equal(previewFacts({ ...BASE, scope: 'personal' }).text, '<span class="muted">personal preview</span>');
  });

  test('a plain user on a global preview: Wake when it sleeps, nothing else', () => {
    assert.doesNotMatch(previewButtons('main', BASE, 'c').toString(), /<form/);
    const asleep = previewButtons('main', { ...BASE, sleeping: true }, 'c');
    assert.match(asleep.toString(), /action="\/previews\/main\/wake">.*Wake<\/button>/);
    assert.doesNotMatch(asleep.toString(), /sleep"|destroy"/);
  });

  test('Redeploy for whom the rules allow (its owner), posting back to the page', () => {
    const owner = previewButtons('pr-7', { ...BASE, mayRedeploy: true }, 'c', '/namespaces/pr-7').toString();
    const form =
      '<form class="inline" method="post" action="/previews/pr-7/redeploy"><input type="hidden" name="csrf" value="c">' +
      '<input type="hidden" name="back" value="/namespaces/pr-7"><button aria-label="Redeploy pr-7">Redeploy</button></form>';
    assert.equal(owner, `${form}  `);
    assert.doesNotMatch(previewButtons('pr-7', { ...BASE, maySleep: true, mayDestroy: true }, 'c').toString(), /redeploy/);
    assert.equal(previewButtons('pr-7', { ...BASE, mayRedeploy: true, destroying: true }, 'c'), '');
  });

  test('who may: Sleep and Destroy; none while it is being destroyed or without a session', () => {
    const all = previewButtons('pr-7', { ...BASE, maySleep: true, mayDestroy: true }, 'c', '/namespaces/pr-7').toString();
    assert.match(
      all,
      /action="\/previews\/pr-7\/sleep"><input type="hidden" name="csrf" value="c"><input type="hidden" name="back" value="\/namespaces\/pr-7">/,
    );
    assert.match(all, /action="\/previews\/pr-7\/destroy">.*<button aria-label="Destroy pr-7">Destroy<\/button>/);
    assert.equal(previewButtons('pr-7', { ...BASE, maySleep: true, mayDestroy: true, destroying: true }, 'c'), '');
    assert.equal(previewButtons('pr-7', { ...BASE, maySleep: true }, undefined), '');
  });
});
