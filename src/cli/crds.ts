/** `switchboard crds`: prints the CustomResourceDefinitions of switchboard.dev as multi-document YAML. */
import { renderAllCrds } from '../api/crd/render.ts';

export function renderCrds(): string {
  return renderAllCrds();
}
