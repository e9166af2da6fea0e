/** The admin page rendered from given data: the forms an admin acts with, never on its own account; escaping. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { adminPage, deleteUserPage, userCreatedPage } from './admin-page.ts';

const DATA = {
  user: 'root',
  csrf: 'c"s',
  users: [
    { name: 'root', admin: true, disabled: false },
    { name: 'ann', admin: false, disabled: false },
    { name: 'bob', admin: true, disabled: true },
  ],
  namespaces: [
    {
      name: 'shop',
      owner: 'ann',
      preview: false,
      status: 'Active',
      sleepable: true,
      deletable: true,
      lastActivity: '2026-12-02T09:58:00Z',
      sleepsAt: '2026-12-02T12:58:00Z',
      deletesAt: '2026-12-16T09:58:00Z',
    },
    {
      name: 'ann-devtool',
      owner: 'ann',
      preview: false,
      status: 'Sleeping since 2026-12-02 10:00 UTC (by idle)',
      sleep: 'Sleeping' as const,
      sleepable: true,
      deletable: false,
    },
    { name: 'pr-7', owner: 'bob', preview: true, status: 'Active', sleepable: false, deletable: false },
  ],
  settings: [{ name: 'Metrics token', value: 'set' }],
};

const rowOf = (page: string, attr: string, name: string) => new RegExp(`<tr ${attr}="${name}">(.*?)</tr>`, 's').exec(page)?.[1] ?? '';

describe('admin page, rendered', () => {
  const p = adminPage(DATA);

  test('the navigation lists Admin, marked as the current page', () => {
    assert.match(p, /<li><a href="\/admin" aria-current="page">Admin<\/a><\/li>/);
  });

  test('users: admin and disabled shown; make admin or take it back, disable or enable, delete after a confirmation', () => {
    const ann = rowOf(p, 'data-user', 'ann');
    assert.match(ann, /<td data-label="Admin">no<\/td>/);
    assert.match(ann, /action="\/admin\/users\/ann\/admin"><input type="hidden" name="csrf" value="c&quot;s"><input type="hidden" name="admin" value="true">/);
    assert.match(ann, /<button aria-label="Make admin ann">Make admin<\/button>/);
    assert.match(ann, /Make admin<\/button><\/form> <form class="inline" method="post" action="\/admin\/users\/ann\/disable">/);
    assert.match(ann, /action="\/admin\/users\/ann\/disable">/);
    assert.match(ann, /<a href="\/admin\/users\/ann\/delete" aria-label="Delete… ann">Delete…<\/a>/);
    const bob = rowOf(p, 'data-user', 'bob');
    assert.match(bob, /<input type="hidden" name="admin" value="false"><button aria-label="Take admin bob">Take admin<\/button>/);
    assert.match(bob, /<span class="bad">disabled<\/span>/);
    assert.match(bob, /action="\/admin\/users\/bob\/enable">/);
  });

  test("no form acts on the admin's own account", () => {
    const root = rowOf(p, 'data-user', 'root');
    assert.match(root, /your own account/);
    assert.doesNotMatch(root, /<form|href="\/admin\/users\/root/);
  });

  test('namespaces: owner, status with the announced sleep and deletion, last activity; sleep, wake, delete where allowed', () => {
    const shop = rowOf(p, 'data-namespace', 'shop');
    assert.match(shop, /<td data-label="Owner">ann<\/td>/);
    assert.match(shop, /Active<br><span class="muted" data-announcement>sleeps at 2026-12-02 12:58 UTC, deleted at 2026-12-16 09:58 UTC unless used<\/span>/);
    assert.match(shop, /<td data-label="Last activity">2026-12-02 09:58 UTC<\/td>/);
    assert.match(shop, /action="\/admin\/namespaces\/shop\/sleep">/);
    assert.match(shop, /action="\/admin\/namespaces\/shop\/delete">/);
    const personal = rowOf(p, 'data-namespace', 'ann-devtool');
    assert.match(personal, /action="\/admin\/namespaces\/ann-devtool\/wake">/);
    assert.doesNotMatch(personal, /\/delete"/, 'a personal namespace goes only with its account');
    const preview = rowOf(p, 'data-namespace', 'pr-7');
    assert.match(preview, /\(preview\)/);
    assert.doesNotMatch(preview, /<form/);
  });

  test('settings as a table of rows', () => {
    assert.match(p, /<tr><td data-label="Setting"><b>Metrics token<\/b><\/td><td data-label="Value">set<\/td><\/tr>/);
  });

  test('for an API token (no session): the same page without a form', () => {
    const { csrf: _, ...rest } = DATA;
    const ro = adminPage(rest);
    assert.doesNotMatch(ro, /<form/);
    assert.match(ro, /<tr data-user="ann">/);
  });

  test('values are escaped', () => {
    const e = adminPage({ ...DATA, users: [{ name: '<x>', admin: false, disabled: false }], namespaces: [], settings: [{ name: 'a&b', value: '<script>' }] });
    assert.doesNotMatch(e, /<x>|<script>/);
    assert.match(e, /&lt;script&gt;/);
    assert.match(e, /<p id="all-namespaces" class="muted">None\.<\/p>/);
  });

  test('a created user: its token once, and the login command with the service URL', () => {
    const c = userCreatedPage({
      user: 'root',
      csrf: 'c',
      created: { name: 'cat', admin: false, namespace: 'cat-devtool', token: 'dt_abc' },
      url: 'https://devtool.example',
    });
    assert.match(c, /<code id="new-token" class="secret">dt_abc<\/code>/);
    assert.match(c, /<code class="secret" id="login-command">devtool context use https:\/\/devtool.example --token dt_abc<\/code>/);
    assert.match(c, /<code>cat-devtool<\/code>/);
  });

  test('deleting a user: the confirmation names the namespaces that go with it', () => {
    const d = deleteUserPage({ user: 'root', csrf: 'c', name: 'ann', namespaces: ['ann-devtool', 'shop'] });
    assert.match(d, /<ul id="doomed"><li><code>ann-devtool<\/code><\/li><li><code>shop<\/code><\/li><\/ul>/);
    assert.match(
      d,
      /<form method="post" action="\/admin\/users\/ann\/delete"><input type="hidden" name="csrf" value="c"><button>Delete ann and its namespaces<\/button>/,
    );
    assert.match(deleteUserPage({ user: 'root', csrf: 'c', name: 'ann', namespaces: [] }), /It owns no namespace\./);
  });
});
