import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InMemoryLogRecordExporter } from '@opentelemetry/sdk-logs';
import { compile } from '../../../cel/index.ts';
import { CompiledLifecycle } from '../../compile/lifecycle.ts';
import { compileLogExport, exportRecord, type LogSelection } from './compile.ts';
import { logsExportUrl } from './provider.ts';

describe('logsExportUrl', () => {
  const rows = [
    { name: 'HTTP: the default path on the origin', endpoint: 'http://otel:4318', protocol: 'HTTP' as const, path: '/v1/logs', want: 'http://otel:4318/v1/logs' },
    { name: 'HTTP: the path replaces the URL\'s own', endpoint: 'https://otel:4318/base/', protocol: 'HTTP' as const, path: '/custom/logs', want: 'https://otel:4318/custom/logs' },
    { name: 'HTTP: a path without its slash', endpoint: 'http://otel:4318', protocol: 'HTTP' as const, path: 'ingest', want: 'http://otel:4318/ingest' },
    { name: 'gRPC: the origin only', endpoint: 'http://otel:4317/ignored', protocol: 'GRPC' as const, path: '/v1/logs', want: 'http://otel:4317' },
  ];
  for (const row of rows) it(row.name, () => assert.equal(logsExportUrl(row.endpoint, row.protocol, row.path), row.want));
});

const program = (text: string) => {
  const r = compile(text);
  if (!r.ok) throw new Error(r.error.message);
  return r.program;
};
const PARENT: LogSelection = { filter: program('true'), remove: new Set(['bytes']), add: [{ name: 'p', program: program('1') }] };

describe('compileLogExport', () => {
  it('filter and attributes default to the parent access log\'s', () => {
    const compiled = compileLogExport({ url: 'http://otel:4317' }, PARENT, { endpoint: () => 'http://otel:4317', exporter: new InMemoryLogRecordExporter() }, assert.fail);
    assert.equal(compiled?.filter, PARENT.filter);
    assert.equal(compiled?.remove, PARENT.remove);
    assert.equal(compiled?.add, PARENT.add);
  });

  it('its own filter and attributes replace the parent\'s; an expression that does not compile is reported and left out', () => {
    const errors: string[] = [];
    const compiled = compileLogExport({ url: 'http://otel:4317', filter: 'false', attributes: { add: [{ name: 'ok', expression: '2' }, { name: 'bad', expression: 'x.(' }] } }, PARENT, { endpoint: () => 'http://otel:4317', exporter: new InMemoryLogRecordExporter() }, (m) => errors.push(m));
    assert.notEqual(compiled?.filter, PARENT.filter);
    assert.deepEqual([...(compiled?.remove ?? [])], []);
    assert.deepEqual(compiled?.add.map((a) => a.name), ['ok']);
    assert.equal(errors.length, 1);
    assert.match(errors[0] as string, /attribute bad/);
  });

  it('an endpoint that cannot be resolved is reported: no export', () => {
    const errors: string[] = [];
    assert.equal(compileLogExport({ backendRef: { name: 'otel' } } as never, undefined, { endpoint: () => { throw new Error('no backend otel'); } }, (m) => errors.push(m)), undefined);
    assert.deepEqual(errors, ['OTLP endpoint: no backend otel']);
  });

  it('records carry the fields as attributes (bigints as numbers, maps kept)', async () => {
    const exporter = new InMemoryLogRecordExporter();
    const compiled = compileLogExport({ url: 'http://otel:4317' }, undefined, { endpoint: () => 'http://otel:4317', exporter }, assert.fail);
    assert.ok(compiled);
    exportRecord(compiled.logger, { status: 200, code: 201n, headers: { 'x-a': 'b' }, none: undefined });
    assert.equal(exporter.getFinishedLogRecords().length, 0, 'batched');
    await compiled.provider.forceFlush();
    const [record] = exporter.getFinishedLogRecords();
    assert.equal(record?.body, 'request');
    assert.deepEqual(record?.attributes, { status: 200, code: 201, headers: { 'x-a': 'b' } });
    await compiled.provider.shutdown();
  });

  it('a retired config shuts its provider down once the requests holding it have ended', async () => {
    const exporter = new InMemoryLogRecordExporter();
    let shutDown = false;
    const shutdown = exporter.shutdown.bind(exporter);
    exporter.shutdown = () => {
      shutDown = true;
      return shutdown();
    };
    const lifecycle = new CompiledLifecycle();
    const compiled = compileLogExport({ url: 'http://otel:4317' }, undefined, { endpoint: () => 'http://otel:4317', exporter, lifecycle }, assert.fail);
    assert.equal(compiled?.lifecycle, lifecycle);
    lifecycle.enter();
    const retired = lifecycle.retire(5_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(shutDown, false, 'a request still holds the config');
    lifecycle.leave();
    await retired;
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(shutDown, true);
  });
});
