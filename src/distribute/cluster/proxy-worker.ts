// The module each cluster worker runs: the real proxy runtime fed by the primary.
import { createProxyRuntime } from '../proxy-runtime.ts';
import { runWorker } from './worker.ts';

runWorker(createProxyRuntime);
