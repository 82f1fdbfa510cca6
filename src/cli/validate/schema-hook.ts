import type { SourcedObject } from '../../api/gateway/object.ts';
import { validateProxyObject } from '../../api/v1alpha1/validate.ts';
import { apiGroupOf } from '../../controller/sources/known-kinds.ts';
import type { ConfigProblem } from '../../controller/sources/types.ts';

const PROXY_GROUP = 'switchboard.dev';

/**
 * The one place where per-kind schema validation joins `switchboard validate`: every object of
 * our group goes through the v1alpha1 validator (schema + cross-field rules), and each issue
 * becomes a finding at the object's origin with its field path.
 */
export function schemaValidationFindings(objects: readonly SourcedObject[], opts: { proxyModelsEnabled?: boolean } = {}): ConfigProblem[] {
  return objects
    .filter(({ object }) => apiGroupOf(object.apiVersion) === PROXY_GROUP)
    .flatMap(({ object, origin }) => validateProxyObject(object, opts).map((issue): ConfigProblem => ({
      severity: issue.severity,
      file: origin?.file, document: origin?.document, line: origin?.line,
      object: { kind: object.kind, namespace: object.metadata.namespace, name: object.metadata.name },
      ...(issue.path ? { path: issue.path } : {}),
      message: issue.message,
    })));
}
