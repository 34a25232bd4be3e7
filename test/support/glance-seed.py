"""Gives a test Keystone (seeded by keystone-seed.py) what Glance needs.

The `glance` service user with the admin role on the `service` project,
and the image endpoints (public, internal) pointed at the port Glance
listens on. Idempotent, and safe beside heat-seed.py: running it again finds what
exists, resets the password it is given and moves the endpoints.

Reads JSON on stdin: url, adminPassword, glancePassword, imageUrl, region.
Writes JSON on stdout: serviceProjectId, glanceUserId.
"""

import json
import sys

from keystoneauth1 import exceptions, session
from keystoneauth1.identity import v3
from keystoneclient.v3 import client


def one(found):
    return found[0] if found else None


def ensure(find, create):
    """What `find` finds, else what `create` makes; a seed running beside
    this one (Heat's) may make it first, which Keystone answers with 409."""
    found = find()
    if found:
        return found
    try:
        return create()
    except exceptions.Conflict:
        return find()


def main():
    cfg = json.load(sys.stdin)
    auth = v3.Password(auth_url=cfg["url"], username="admin",
                       password=cfg["adminPassword"], user_domain_id="default",
                       project_name="admin", project_domain_id="default")
    admin = client.Client(session=session.Session(auth=auth))

    service = ensure(lambda: one(admin.projects.list(name="service", domain="default")),
                     lambda: admin.projects.create(name="service", domain="default"))
    user = one(admin.users.list(name="glance", domain="default"))
    if user:
        user = admin.users.update(user, password=cfg["glancePassword"], enabled=True)
    else:
        user = admin.users.create(name="glance", password=cfg["glancePassword"],
                                  domain="default", default_project=service)
    admin_role = ensure(lambda: one(admin.roles.list(name="admin")),
                        lambda: admin.roles.create(name="admin"))
    admin.roles.grant(admin_role, user=user, project=service)

    image = (one(admin.services.list(type="image"))
             or admin.services.create(name="glance", type="image", description="Image"))
    endpoints = {e.interface: e for e in admin.endpoints.list(service=image)}
    for interface in ("public", "internal"):
        if interface in endpoints:
            admin.endpoints.update(endpoints[interface], url=cfg["imageUrl"])
        else:
            admin.endpoints.create(service=image, url=cfg["imageUrl"],
                                   interface=interface, region=cfg["region"])

    json.dump({"serviceProjectId": service.id, "glanceUserId": user.id}, sys.stdout)


if __name__ == "__main__":
    main()
