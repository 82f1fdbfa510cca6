import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compile, createActivation } from './index.ts';

/** Switchboard's functions: network, JSON, base64, RE2 regexes, strings, sampling, defaults. */

type Row = { name: string; expr: string; want?: unknown; error?: true };

const rows: Row[] = [
  // network (Kubernetes CEL names)
  { name: 'isIP v4', expr: 'isIP("10.0.0.1")', want: true },
  { name: 'isIP v6', expr: 'isIP("2001:db8::1")', want: true },
  { name: 'isIP rejects leading zeros', expr: 'isIP("010.0.0.1")', want: false },
  { name: 'isIP rejects zones', expr: 'isIP("fe80::1%eth0")', want: false },
  { name: 'isIP rejects garbage', expr: 'isIP("not-an-ip")', want: false },
  { name: 'ip() of garbage fails', expr: 'ip("nope")', error: true },
  { name: 'ip family', expr: '[ip("10.0.0.1").family(), ip("::1").family()]', want: [4n, 6n] },
  { name: 'string(ip) is canonical', expr: 'string(ip("2001:0db8:0:0:0:0:0:1"))', want: '2001:db8::1' },
  { name: 'ip equality', expr: 'ip("::ffff:10.0.0.1") == ip("10.0.0.1")', want: true },
  { name: 'ip loopback', expr: 'ip("127.0.0.2").isLoopback() && ip("::1").isLoopback()', want: true },
  { name: 'ip unspecified', expr: 'ip("0.0.0.0").isUnspecified() && ip("::").isUnspecified()', want: true },
  { name: 'ip link-local unicast', expr: 'ip("169.254.1.1").isLinkLocalUnicast() && ip("fe80::1").isLinkLocalUnicast()', want: true },
  { name: 'ip link-local multicast', expr: 'ip("224.0.0.251").isLinkLocalMulticast() && ip("ff02::1").isLinkLocalMulticast()', want: true },
  { name: 'ip global unicast', expr: '[ip("8.8.8.8").isGlobalUnicast(), ip("255.255.255.255").isGlobalUnicast()]', want: [true, false] },
  { name: 'isCIDR', expr: '[isCIDR("10.0.0.0/8"), isCIDR("10.0.0.0/33"), isCIDR("10.0.0.0")]', want: [true, false, false] },
  { name: 'cidr of garbage fails', expr: 'cidr("10.0.0.0/99")', error: true },
  { name: 'cidr containsIP string', expr: 'cidr("10.0.0.0/8").containsIP("10.200.3.4")', want: true },
  { name: 'cidr does not contain outside', expr: 'cidr("10.0.0.0/8").containsIP("11.0.0.1")', want: false },
  { name: 'cidr containsIP net.IP', expr: 'cidr("2001:db8::/32").containsIP(ip("2001:db8:1::1"))', want: true },
  { name: 'cidr across families', expr: 'cidr("::/0").containsIP("10.0.0.1")', want: false },
  { name: 'cidr containsIP of a non-address is false', expr: 'cidr("0.0.0.0/0").containsIP("/run/socket")', want: false },
  { name: 'cidr containsCIDR', expr: 'cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16") && !cidr("10.1.0.0/16").containsCIDR(cidr("10.0.0.0/8"))', want: true },
  { name: 'cidr ip, prefixLength, masked', expr: '[string(cidr("10.1.2.3/8").ip()), cidr("10.1.2.3/8").prefixLength(), string(cidr("10.1.2.3/8").masked())]', want: ['10.1.2.3', 8n, '10.0.0.0/8'] },
  { name: 'cidr equality', expr: 'cidr("10.0.0.0/8") == cidr("10.0.0.0/8")', want: true },
  // JSON
  { name: 'json object', expr: 'json("{\\"a\\": [1, 2.5, \\"x\\", null, true]}").a', want: [1n, 2.5, 'x', null, true] },
  { name: 'json of bytes', expr: 'json(b"{\\"n\\": 3}").n + 1', want: 4n },
  { name: 'json invalid fails', expr: 'json("{")', error: true },
  { name: 'toJson map', expr: 'toJson({"a": 1, "b": [true, "x"]})', want: '{"a":1,"b":[true,"x"]}' },
  { name: 'toJson bytes and duration', expr: 'toJson([b"hi", duration("1.5s")])', want: '["aGk=","1.5s"]' },
  { name: 'toJson timestamp', expr: 'toJson(timestamp("2024-01-15T10:00:00Z"))', want: '"2024-01-15T10:00:00.000Z"' },
  { name: 'toJson of addresses', expr: 'toJson([ip("::1"), cidr("10.0.0.0/8")])', want: '["::1","10.0.0.0/8"]' },
  { name: 'toJson of a type fails', expr: 'toJson(type(1))', error: true },
  { name: 'json round trip', expr: 'json(toJson({"k": "v"})).k', want: 'v' },
  // base64
  { name: 'base64.encode bytes', expr: 'base64.encode(b"hello")', want: 'aGVsbG8=' },
  { name: 'base64.encode string', expr: 'base64.encode("hello")', want: 'aGVsbG8=' },
  { name: 'base64.decode', expr: 'string(base64.decode("aGVsbG8="))', want: 'hello' },
  { name: 'base64.decode unpadded', expr: 'string(base64.decode("aGVsbG8"))', want: 'hello' },
  { name: 'base64.decode url-safe', expr: 'base64.decode("_-8") == b"\\xff\\xef"', want: true },
  { name: 'base64.decode invalid fails', expr: 'base64.decode("a*b")', error: true },
  // regexes (RE2)
  { name: 'matches method', expr: '"/v1/models".matches("^/v[0-9]+/")', want: true },
  { name: 'matches global form', expr: 'matches("abc", "^a.c$")', want: true },
  { name: 'matches is unanchored', expr: '"xxabcxx".matches("abc")', want: true },
  { name: 'catastrophic pattern returns (linear time)', expr: '"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!".matches("^(a+)+$")', want: false },
  { name: 'catastrophic pattern, global form', expr: 'matches("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", "^(a|a)*$")', want: false },
  { name: 'dynamic invalid pattern fails at run time', expr: '"a".matches(jwt.p)', error: true },
  { name: 'matches on a non-string dyn fails', expr: 'jwt.n.matches("1")', error: true },
  { name: 'find', expr: '"order-1234-x".find("[0-9]+")', want: '1234' },
  { name: 'find without match', expr: '"abc".find("[0-9]+")', want: '' },
  { name: 'findAll', expr: '"a1b22c333".findAll("[0-9]+")', want: ['1', '22', '333'] },
  { name: 'findAll with limit', expr: '"a1b22c333".findAll("[0-9]+", 2)', want: ['1', '22'] },
  { name: 'regexReplace with groups', expr: 'regexReplace("john smith", "(\\\\w+) (\\\\w+)", "$2, $1")', want: 'smith, john' },
  { name: 'regexReplace method form', expr: '"a-b-c".regexReplace("-", "/")', want: 'a/b/c' },
  // strings
  { name: 'replace all', expr: '"a.b.c".replace(".", "/")', want: 'a/b/c' },
  { name: 'replace limited', expr: '"a.b.c".replace(".", "/", 1)', want: 'a/b.c' },
  { name: 'replace empty needle', expr: '"ab".replace("", "-")', want: '-a-b-' },
  { name: 'charAt', expr: '"héllo".charAt(1)', want: 'é' },
  { name: 'charAt at the end', expr: '"ab".charAt(2)', want: '' },
  { name: 'charAt out of range fails', expr: '"ab".charAt(3)', error: true },
  { name: 'reverse', expr: '"abc".reverse()', want: 'cba' },
  { name: 'built-in lowerAscii, split, join, trim', expr: '" A,B ".trim().lowerAscii().split(",").join("|")', want: 'a|b' },
  // sampling and defaults
  { name: 'random is in [0, 1)', expr: '[1, 2, 3, 4, 5, 6, 7, 8].all(i, random() >= 0.0 && random() < 1.0)', want: true },
  { name: 'default on a missing key', expr: 'default(jwt.sub, "anonymous")', want: 'anonymous' },
  { name: 'default keeps a present value', expr: 'default(request.method, "none")', want: 'GET' },
  { name: 'default on a failing expression', expr: 'default(int("x"), 0)', want: 0n },
];

describe('CEL functions', () => {
  const activation = createActivation({ request: { method: 'GET', url: '/' }, jwt: { n: 1, p: '(' } });
  for (const row of rows) {
    it(row.name, () => {
      const compiled = compile(row.expr);
      assert.ok(compiled.ok, compiled.ok ? '' : compiled.error.message);
      const result = compiled.program.evaluate(activation);
      if (row.error) {
        assert.equal(result.ok, false, `expected a failure, got ${result.ok ? String(result.value) : ''}`);
        return;
      }
      assert.ok(result.ok, result.ok ? '' : result.error.message);
      assert.deepEqual(result.value, row.want);
    });
  }

  it('an error inside || is absorbed by a true operand (functions throw CEL errors)', () => {
    const compiled = compile('ip("bad").isLoopback() || true');
    assert.ok(compiled.ok);
    assert.deepEqual(compiled.program.evaluate(activation), { ok: true, value: true });
  });
});
