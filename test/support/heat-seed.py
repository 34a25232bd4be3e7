"""Gives a test Keystone (seeded by keystone-seed.py) what Heat needs.

The `heat` service user with the admin role on the `service` project, the
`heat_stack_owner` and `heat_stack_user` roles (the test user gets the
owner role), the `heat` domain with its `heat_domain_admin`, and the
orchestration endpoints pointed at the port Heat really listens on.
Idempotent: running it again for a restarted Heat finds what exists, resets
the passwords it is given and moves the endpoints.

Reads JSON on stdin: url, adminPassword, username (the test user),
project (the test project), heatPassword, domainAdminPassword,
orchestrationUrl, region. Writes JSON on stdout: serviceProjectId,
heatUserId, domainId.
"""

import json
import sys

from keystoneauth1 import session
from keystoneauth1.identity import v3
from keystoneclient.v3 import client


def one(found):
    return found[0] if found else None


def ensure_role(admin, name):
    return one(admin.roles.list(name=name)) or admin.roles.create(name=name)


def ensure_user(admin, name, password, domain, **extra):
    user = one(admin.users.list(name=name, domain=domain))
    if user:
        return admin.users.update(user, password=password, enabled=True)
    return admin.users.create(name=name, password=password, domain=domain, **extra)


def main():
    cfg = json.load(sys.stdin)
    auth = v3.Password(auth_url=cfg["url"], username="admin",
                       password=cfg["adminPassword"], user_domain_id="default",
                       project_name="admin", project_domain_id="default")
    admin = client.Client(session=session.Session(auth=auth))

    service = (one(admin.projects.list(name="service", domain="default"))
               or admin.projects.create(name="service", domain="default"))
    heat = ensure_user(admin, "heat", cfg["heatPassword"], "default",
                       default_project=service)
    admin.roles.grant(ensure_role(admin, "admin"), user=heat, project=service)

    owner = ensure_role(admin, "heat_stack_owner")
    ensure_role(admin, "heat_stack_user")
    user = one(admin.users.list(name=cfg["username"], domain="default"))
    project = one(admin.projects.list(name=cfg["project"], domain="default"))
    admin.roles.grant(owner, user=user, project=project)

    # Users Heat creates for resources that call back into it (wait
    # conditions, software deployments) live in their own domain.
    domain = (one(admin.domains.list(name="heat"))
              or admin.domains.create(name="heat", description="Stack projects and users"))
    domain_admin = ensure_user(admin, "heat_domain_admin", cfg["domainAdminPassword"], domain)
    admin.roles.grant(ensure_role(admin, "admin"), user=domain_admin, domain=domain)

    orchestration = (one(admin.services.list(type="orchestration"))
                     or admin.services.create(name="heat", type="orchestration",
                                              description="Orchestration"))
    endpoints = {e.interface: e for e in admin.endpoints.list(service=orchestration)}
    for interface in ("public", "internal"):
        if interface in endpoints:
            admin.endpoints.update(endpoints[interface], url=cfg["orchestrationUrl"])
        else:
            admin.endpoints.create(service=orchestration, url=cfg["orchestrationUrl"],
                                   interface=interface, region=cfg["region"])

    json.dump({"serviceProjectId": service.id, "heatUserId": heat.id,
               "domainId": domain.id}, sys.stdout)


if __name__ == "__main__":
    main()
