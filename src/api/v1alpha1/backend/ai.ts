/** AIBackend: one provider, or priority groups of named providers. */
import { List, Obj, Opt } from '../schema/build.ts';
import { exactlyOne } from '../schema/rules.ts';
import type { CrossFieldRule } from '../schema/rules.ts';
import { SectionName } from '../scalars.ts';
import { BackendWithAI } from '../policies/variants.ts';
import { providerMembers, providerRules } from './providers.ts';

export const LLMProvider = () => Obj(providerMembers(), { description: 'how to reach one LLM provider', rules: providerRules() });

export const NamedLLMProvider = () =>
  Obj({
    name: SectionName({ description: 'unique across all groups; policies target it with targetRefs[].sectionName' }),
    ...providerMembers(),
    policies: Opt(BackendWithAI('merge order: policy object < backend < provider')),
  }, { rules: providerRules() });

type Groups = readonly { providers: readonly { name: string }[] }[];

const uniqueProviderNames: CrossFieldRule<{ groups?: Groups }> = {
  path: '.groups',
  message: 'provider names must be unique across all groups',
  cel: '!has(self.groups) || self.groups.all(g, g.providers.all(p, self.groups.filter(h, h.providers.exists(q, q.name == p.name)).size() == 1 && g.providers.filter(q, q.name == p.name).size() == 1))',
  check: (s) => {
    if (!s.groups) return true;
    const names = s.groups.flatMap((g) => g.providers.map((p) => p.name));
    return new Set(names).size === names.length;
  },
};

export const AIBackend = () =>
  Obj({
    provider: Opt(LLMProvider()),
    groups: Opt(List(Obj({ providers: List(NamedLLMProvider(), { min: 1, max: 16 }) }), {
      min: 1, max: 8, description: 'groups in priority order; providers in a group share priority, weighted by health',
    })),
  }, { rules: [exactlyOne(['provider', 'groups']), uniqueProviderNames] });
