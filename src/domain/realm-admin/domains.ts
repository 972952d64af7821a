import { errors } from '../errors.js';
import type { RealmDomainAdded, RealmDomainChanged, RealmDomainRemoved, RealmSettingChanged } from './events.js';

export interface RealmDomain {
  domain: string;
  allow_subdomains: boolean;
}

/** Why `domain` is not a domain, in the real server's words; null when it is one. */
export function domainProblem(domain: string): string | null {
  if (domain.length === 0) return "Domain can't be empty.";
  if (!domain.includes('.')) return 'Domain must have at least one dot (.)';
  if (domain.length > 255) return 'Domain is too long';
  if (domain.startsWith('.') || domain.endsWith('.')) return 'Domain cannot start or end with a dot (.)';
  for (const label of domain.split('.')) {
    if (!label) return "Consecutive '.' are not allowed.";
    if (label.startsWith('-') || label.endsWith('-')) return "Subdomains cannot start or end with a '-'.";
    if (!/^[a-z0-9-]*$/.test(label)) return "Domain can only have letters, numbers, '.' and '-'s.";
  }
  return null;
}

export interface DomainsState {
  realm_id: number;
  domains: readonly RealmDomain[];
  emails_restricted_to_domains: boolean;
}

const notFound = (domain: string) => errors.badRequest(`No entry found for domain ${domain}.`);

export type RealmDomainCommand =
  | { type: 'AddRealmDomain'; domain_id: number; domain: string; allow_subdomains: boolean }
  | { type: 'ChangeRealmDomain'; domain: string; allow_subdomains: boolean }
  | { type: 'RemoveRealmDomain'; domain: string };

/** Pure: the realm_domains commands (the caller has checked the actor is an owner). */
export function decideRealmDomains(
  command: RealmDomainCommand,
  state: DomainsState,
): Array<RealmDomainAdded | RealmDomainChanged | RealmDomainRemoved | RealmSettingChanged> {
  const existing = state.domains.find((d) => d.domain === command.domain);
  switch (command.type) {
    case 'AddRealmDomain': {
      const problem = domainProblem(command.domain);
      if (problem) throw errors.badRequest(`Invalid domain: ${problem}`);
      if (existing) throw errors.badRequest(`The domain ${command.domain} is already a part of your organization.`);
      return [{ type: 'RealmDomainAdded', data: { realm_id: state.realm_id, domain_id: command.domain_id, domain: command.domain, allow_subdomains: command.allow_subdomains } }];
    }
    case 'ChangeRealmDomain':
      if (!existing) throw notFound(command.domain);
      // Recorded (and announced) even when the value stays the same, as the real server does.
      return [{ type: 'RealmDomainChanged', data: { realm_id: state.realm_id, domain: command.domain, allow_subdomains: command.allow_subdomains } }];
    case 'RemoveRealmDomain': {
      if (!existing) throw notFound(command.domain);
      const removed: RealmDomainRemoved = { type: 'RealmDomainRemoved', data: { realm_id: state.realm_id, domain: command.domain } };
      // Restricting to no domain at all would refuse everyone: the real server lifts the restriction.
      if (state.domains.length === 1 && state.emails_restricted_to_domains) {
        return [{ type: 'RealmSettingChanged', data: { realm_id: state.realm_id, property: 'emails_restricted_to_domains', value: false } }, removed];
      }
      return [removed];
    }
  }
}

/**
 * Pure: whether an organization that restricts sign-ups to its domains takes `email` (an
 * allowed domain, or a subdomain of one that allows them; no `+` addresses, as on the real server).
 */
export function emailOutsideDomains(email: string, restricted: boolean, domains: readonly RealmDomain[]): string | null {
  if (!restricted) return null;
  const at = email.lastIndexOf('@');
  if (email.slice(0, at).includes('+')) return 'Email addresses containing + are not allowed.';
  const domain = email.slice(at + 1).toLowerCase();
  const allowed = domains.some((d) => d.domain === domain || (d.allow_subdomains && domain.endsWith(`.${d.domain}`)));
  return allowed ? null : 'Outside your domain.';
}
