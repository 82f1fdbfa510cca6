import { stringify } from 'yaml';
import type { SourcedObject } from '../../api/gateway/object.ts';
import { applyDefaults, isProxyKind } from '../../api/v1alpha1/validate.ts';

/** Every switchboard.dev object with SPEC.md's defaults applied, as multi-document YAML. */
export function withDefaultsYaml(objects: readonly SourcedObject[]): string {
  return objects
    .filter(({ object }) => isProxyKind(object.apiVersion, object.kind))
    .map(({ object, origin }) => `---\n${origin ? `# ${origin.file} (document ${origin.document})\n` : ''}${stringify(applyDefaults(object))}`)
    .join('');
}
