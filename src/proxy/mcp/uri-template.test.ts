import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { matchesTemplate } from './uri-template.ts';

describe('matchesTemplate', () => {
  const cases = [
    { name: 'simple expression fills one segment', template: 'demo://resource/dynamic/text/{id}', uri: 'demo://resource/dynamic/text/42', match: true },
    { name: 'simple expression does not cross a slash', template: 'demo://resource/dynamic/text/{id}', uri: 'demo://resource/dynamic/text/4/2', match: false },
    { name: 'literal text must match exactly', template: 'demo://resource/dynamic/text/{id}', uri: 'demo://resource/dynamic/blob/42', match: false },
    { name: 'regex metacharacters in literals are literal', template: 'file:///a.b/{x}', uri: 'file:///aXb/1', match: false },
    { name: 'reserved expansion crosses slashes', template: 'file:///{+path}', uri: 'file:///etc/hosts', match: true },
    { name: 'path operator adds segments', template: 'repo://x{/owner,name}', uri: 'repo://x/me/proj', match: true },
    { name: 'query operator is optional', template: 'search://q{?term,page}', uri: 'search://q', match: true },
    { name: 'query operator with values', template: 'search://q{?term,page}', uri: 'search://q?term=a&page=2', match: true },
    { name: 'several expressions', template: 'users://{org}/{user}/profile', uri: 'users://acme/bob/profile', match: true },
    { name: 'no expression: exact match only', template: 'config://app', uri: 'config://app', match: true },
    { name: 'no expression: different text', template: 'config://app', uri: 'config://apps', match: false },
    { name: 'unclosed brace never matches', template: 'broken://{id', uri: 'broken://{id', match: false },
  ];
  for (const c of cases) {
    it(c.name, () => assert.equal(matchesTemplate(c.template, c.uri), c.match));
  }
});
