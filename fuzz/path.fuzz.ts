/**
 * Fuzz target for the request-path normalizer (src/proxy/http/path.ts), which takes the request
 * target exactly as a client sent it. Returns for any input; throws only on a defect: an
 * exception other than the documented refusal, a result that is not canonical, a result that
 * changes when normalized again, or a query that did not come through untouched.
 */
import { normalizePath, normalizeTarget, PathRefusal } from '../src/proxy/http/path.ts';

const UNRESERVED_ENCODED = /%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[Dd]|2[Ee]|5[Ff]|7[Ee])/;

export function fuzz(data: Buffer): void {
  // HTTP/1 hands request targets over as latin1; HTTP/2 `:path` may carry any string.
  const text = data.toString('latin1');
  checkTarget(text);
  checkTarget(`/${text}`);
  checkTarget(`/${data.toString('utf8')}`);
}

function checkTarget(target: string): void {
  const result = normalizeTarget(target);
  if (result instanceof PathRefusal) {
    if (typeof result.reason !== 'string' || result.reason === '') throw new Error('a refusal without a reason');
    return;
  }
  if (typeof result !== 'string') throw new Error(`normalizeTarget returned ${typeof result}`);
  const q = target.indexOf('?');
  if (q >= 0 && !result.endsWith(target.slice(q))) throw new Error(`the query changed: ${JSON.stringify(target)} → ${JSON.stringify(result)}`);
  if (target.charCodeAt(0) !== 0x2f) return; // not origin-form: the caller refuses it
  const path = q < 0 ? result : result.slice(0, result.length - (target.length - q));
  checkCanonical(path, target);
  const again = normalizeTarget(result);
  if (again !== result) throw new Error(`not idempotent: ${JSON.stringify(result)} → ${JSON.stringify(again)}`);
  const alone = normalizePath(path);
  if (alone !== path) throw new Error(`normalizePath disagrees: ${JSON.stringify(path)} → ${JSON.stringify(alone)}`);
}

function checkCanonical(path: string, input: string): void {
  const fail = (what: string) => {
    throw new Error(`${what}: ${JSON.stringify(input)} → ${JSON.stringify(path)}`);
  };
  if (path.charCodeAt(0) !== 0x2f) fail('does not start with /');
  if (path.includes('//')) fail('contains //');
  if (path.includes('/./') || path.includes('/../') || path.endsWith('/.') || path.endsWith('/..')) fail('contains a dot-segment');
  if (UNRESERVED_ENCODED.test(path)) fail('contains an encoded unreserved character');
  if (/%(?![0-9A-F]{2})/.test(path)) fail('contains % without two uppercase hex digits');
  if (/%2F|%5C|%00/.test(path)) fail('contains an encoded slash, backslash or NUL');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0020\u007f\\#]/.test(path)) fail('contains a control character, space, backslash or #');
}
