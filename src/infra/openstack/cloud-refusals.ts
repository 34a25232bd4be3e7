/**
 * What the cloud under Heat refused, read from the words Heat passes on:
 * Nova's, Neutron's and Glance's own reasons (a stack's or resource's
 * status reason, or the message of a stack create Heat refused at
 * validation). The template is not at fault there; the hint says what to
 * change in the cloud or the request, and what op-retry and op-rollback
 * then do with the stack.
 */

/** A refusal whose cause is in the cloud, with the hint that goes with it. */
export interface CloudRefusal {
  /** What the cloud lacks, in a few words ("the project's quota"). */
  what: string;
  hint: string;
}

const AFTER_FAILED_STACK = 'op-retry then updates the stack, and Heat makes what is missing; op-rollback deletes the stack';
const AFTER_NO_STACK = 'nothing was created: op-retry then sends the stack again; op-rollback has nothing to delete';

interface Rule {
  test: RegExp;
  what: string;
  fix: string;
}

/**
 * Nova: "Quota exceeded for instances: Requested 1, but already used 1 of 1
 * instances" (HTTP 403), "No valid host was found" (the server went ERROR);
 * Neutron: "Quota exceeded for resources: ['port']" (OverQuota), "No more IP
 * addresses available", and Heat's lookup of a network "Unable to find
 * network with name or id"; Glance: an image not yet active (Heat's check
 * "Image status is required to be active not queued", Nova's "Image ... is
 * not active").
 */
const RULES: Rule[] = [
  { test: /Quota exceeded|OverQuota|exceeds? (?:the )?quota/i, what: "the project's quota", fix: "raise the project's quota at the VIM (or free what uses it)" },
  {
    test: /No valid host was found/i,
    what: 'a compute host that can hold the server',
    fix: 'no compute host of the VIM has room for a server of this flavour: use a smaller flavour, or add capacity to the VIM',
  },
  {
    test: /Unable to find network|Network [^ ]+ could not be found|NetworkNotFound/i,
    what: 'a network the request or the package names',
    fix: 'create the network at the VIM, or name one that exists (the request’s extVirtualLinks resourceId, or the package)',
  },
  {
    test: /No more IP addresses available|IpAddressGenerationFailure/i,
    what: 'a free address on the network',
    fix: 'free addresses on the subnet or give it a larger range',
  },
  {
    test: /Image status is required to be active|Image [^ ]+ is not active|image[^.]*\bnot active\b/i,
    what: 'an active image',
    fix: 'an image the stack names is not active in Glance (its upload has not finished, or it failed): wait until it is active, or upload it again',
  },
];

/** The refusal the cloud's reason shows, when it shows one; `stackLeft` tells whether the failure left a stack (FAILED) or none (refused at validation). */
export function cloudRefusal(reason: string, stackLeft: boolean): CloudRefusal | undefined {
  const rule = RULES.find((r) => r.test.test(reason));
  if (!rule) return undefined;
  return { what: rule.what, hint: `${rule.fix}; ${stackLeft ? AFTER_FAILED_STACK : AFTER_NO_STACK}` };
}

/** The hint of a stack that ended FAILED for a reason the cloud gave (or any other). */
export function failedStackHint(reason: string): string {
  return cloudRefusal(reason, true)?.hint ?? `fix what Heat names (the template, the environment, or the cloud: quotas, images, flavours, networks); ${AFTER_FAILED_STACK}`;
}

/**
 * Heat's own policy on a resource type (`resource_types:<type>`, HTTP 403
 * "You are not authorized to use resource_types:OS::Nova::Flavor."): the
 * VIM user may use Heat, not that type. Stock Heat leaves OS::Nova::Flavor,
 * OS::Nova::HostAggregate, OS::Cinder::VolumeType, OS::Neutron::QoSPolicy
 * and the like to admins.
 */
export function resourceTypeRefusal(message: string): CloudRefusal | undefined {
  const type = /not authorized to use resource_types:([\w:]+)/i.exec(message)?.[1];
  if (!type) return undefined;
  const fix =
    type === 'OS::Nova::Flavor'
      ? "the templates make a flavor (OS::Nova::Flavor: the HOT vnfm makes from a VNFD makes one of each VDU's virtual_compute size), which Heat and Nova leave to admins: give the VIM user the admin role on its project, as Tacker v1's VIM usually has, or onboard a package whose Base HOT names existing flavors"
      : `Heat's policy leaves ${type} to other roles (usually admin): give the VIM user such a role on its project, or use a template without ${type}`;
  return { what: `the right to use ${type}`, hint: `${fix}; ${AFTER_NO_STACK}` };
}
