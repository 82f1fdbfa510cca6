import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { ProcessingMode_HeaderSendMode, ProcessingModeSchema } from '../gen/envoy/extensions/filters/http/ext_proc/v3/processing_mode_pb.js';
import { applyOverride, initialModes, type ExtProcConfig } from './config.ts';

describe('ext_proc trailer modes', () => {
  const cases: { name: string; options: ExtProcConfig['processingOptions']; override?: Parameters<typeof create<typeof ProcessingModeSchema>>[1]; want: [string, string] }[] = [
    { name: 'SPEC.md default: both Send', options: undefined, want: ['Send', 'Send'] },
    { name: 'configured Skip', options: { requestTrailerMode: 'Skip', responseTrailerMode: 'Skip' }, want: ['Skip', 'Skip'] },
    { name: 'an override DEFAULT keeps the mode', options: { responseTrailerMode: 'Skip' }, override: {}, want: ['Send', 'Skip'] },
    {
      name: 'an override SEND / SKIP switches it',
      options: { responseTrailerMode: 'Skip' },
      override: { requestTrailerMode: ProcessingMode_HeaderSendMode.SKIP, responseTrailerMode: ProcessingMode_HeaderSendMode.SEND },
      want: ['Skip', 'Send'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const modes = initialModes({ url: 'http://p', processingOptions: c.options });
      if (c.override) applyOverride(modes, create(ProcessingModeSchema, c.override));
      assert.deepEqual([modes.requestTrailers, modes.responseTrailers], c.want);
    });
  }
});
