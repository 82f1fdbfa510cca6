import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../../common/logger.ts';
import type { KubeClient } from '../client.ts';
import { Provisioner } from './provisioner.ts';

describe('Provisioner start', () => {
  const start = (inferenceExtension: boolean): string[] => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (l: string) => lines.push(l) } });
    new Provisioner({ client: {} as KubeClient, logger, controllerName: 'c', isLeader: () => true, controllerUrl: 'http://c:9978', defaultTag: '1', ...(inferenceExtension ? { inferenceExtension } : {}) });
    return lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
  };
  it('says at start that inferenceExtension.enabled has no routing behind it', () => {
    assert.ok(start(true).some((m) => /inferenceExtension\.enabled is set.*InferencePool backendRefs are refused/.test(m)));
  });
  it('says nothing without it', () => assert.deepEqual(start(false), []));
});
