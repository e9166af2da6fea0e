import assert from 'node:assert/strict';
import { test } from 'node:test';
import { didYouMean, editDistance, suggest } from './suggest.ts';

test('editDistance counts a swap of two neighbours as one edit', () => {
  assert.equal(editDistance('deploy', 'deploy'), 0);
  assert.equal(editDistance('deplyo', 'deploy'), 1);
  assert.equal(editDistance('upp', 'up'), 1);
  assert.equal(editDistance('kitten', 'sitting'), 3);
  assert.equal(editDistance('', 'abc'), 3);
});

test('suggest: at most a third of the word in edits, case ignored, first of equals', () => {
  assert.equal(suggest('imgae', ['image', 'build', 'ports']), 'image');
  assert.equal(suggest('servics', ['services', 'volumes']), 'services');
  assert.equal(suggest('NAMSPACE', ['namespace', 'name']), 'namespace');
  assert.equal(suggest('zzz', ['image', 'build']), undefined);
  assert.equal(suggest('ab', ['cd', 'ef']), undefined);
  assert.equal(suggest('tset', ['test', 'tset2']), 'test');
  assert.equal(suggest('', ['anything']), undefined);
});

test('suggest: a word that starts a candidate is an abbreviation of it', () => {
  assert.equal(suggest('u', ['list', 'use', 'delete']), 'use');
  assert.equal(suggest('dep', ['build', 'deploy']), 'deploy');
});

test('didYouMean: the phrase, with a prefix before the name, or nothing', () => {
  assert.equal(didYouMean('portz', ['ports']), ' (did you mean "ports"?)');
  assert.equal(didYouMean('namspace', ['namespace'], '--'), ' (did you mean "--namespace"?)');
  assert.equal(didYouMean('zzz', ['ports']), '');
});

test('suggestions for likely typos only', () => {
  assert.equal(suggest('imgae', ['image', 'build', 'ports']), 'image');
  assert.equal(suggest('servics', ['services', 'volumes']), 'services');
  assert.equal(suggest('zzz', ['image', 'build']), undefined);
  assert.equal(didYouMean('portz', ['ports']), ' (did you mean "ports"?)');
  assert.equal(didYouMean('x', ['ports']), '');
});
