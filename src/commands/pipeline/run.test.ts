import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageError } from '../../base/errors.ts';
import { checkRepository, pipelineName } from './run.ts';

test('the pipeline name: --name, else the repository given, else the folder', () => {
  assert.equal(pipelineName('Shop_API', undefined, '/home/a/x'), 'shop-api');
  assert.equal(pipelineName(undefined, 'https://git.example.com/team/web-shop.git', '/home/a/x'), 'web-shop');
  assert.equal(pipelineName(undefined, undefined, '/home/a/My App'), 'my-app');
  assert.throws(() => pipelineName('x'.repeat(41), undefined, '/'), /flag --name: letters, digits and '-', at most 40 characters/);
});

test('repositories: HTTPS without credentials; SSH refused with the HTTPS URL to use', () => {
  checkRepository('https://github.com/team/app.git', false);
  const refused = (url: string, fromCheckout: boolean) => {
    try {
      checkRepository(url, fromCheckout);
    } catch (err) {
      assert.ok(err instanceof UsageError);
      return err.message;
    }
    assert.fail(`${url} accepted`);
  };
  assert.equal(
    refused('git@github.com:team/app.git', false),
    'invalid value "git@github.com:team/app.git" for flag --repository: pipelines clone over HTTPS only (never SSH); ' +
      'e.g. --repository https://github.com/team/app.git',
  );
  assert.equal(
    refused('ssh://git@gitlab.example.com/group/app.git', true),
    "the checkout's origin remote (ssh://git@gitlab.example.com/group/app.git): pipelines clone over HTTPS only (never SSH); " +
      'e.g. --repository https://gitlab.example.com/group/app.git',
  );
  assert.match(refused('http://example.com/app.git', false), /HTTPS only \(never SSH\)$/);
  assert.match(
    refused('https://user:tok@github.com/team/app.git', false),
    /credentials do not belong in the URL; store the token on the service as the secret GIT_TOKEN_<HOST>/,
  );
});
