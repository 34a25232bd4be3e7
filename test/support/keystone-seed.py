"""Seeds a freshly bootstrapped Keystone with what the vnfm tests need.

One process with keystoneclient instead of one `openstack` call per object:
the CLI pays its start-up time on every call.

Reads JSON on stdin: url, adminPassword, project, username, password,
orchestrationUrl, region. Writes JSON on stdout: projectId, userId,
appCredential {id, secret}.
"""

import json
import sys

from keystoneauth1 import session
from keystoneauth1.identity import v3
from keystoneclient.v3 import client


def connect(url, username, password, **scope):
    auth = v3.Password(auth_url=url, username=username, password=password,
                       user_domain_id="default", **scope)
    return client.Client(session=session.Session(auth=auth))


def main():
    cfg = json.load(sys.stdin)
    admin = connect(cfg["url"], "admin", cfg["adminPassword"],
                    project_name="admin", project_domain_id="default")

    project = admin.projects.create(name=cfg["project"], domain="default")
    user = admin.users.create(name=cfg["username"], password=cfg["password"],
                              domain="default", default_project=project)
    # bootstrap creates admin, member and reader; create any that is missing
    # so the script also works on a Keystone bootstrapped differently.
    for name in ("member", "admin"):
        found = admin.roles.list(name=name)
        role = found[0] if found else admin.roles.create(name=name)
        admin.roles.grant(role, user=user, project=project)

    heat = admin.services.create(name="heat", type="orchestration",
                                 description="Orchestration (catalog entry only)")
    for interface in ("public", "internal"):
        admin.endpoints.create(service=heat, url=cfg["orchestrationUrl"],
                               interface=interface, region=cfg["region"])

    # Application credentials are created by their owner, with a token
    # scoped to the project they will be bound to.
    owner = connect(cfg["url"], cfg["username"], cfg["password"],
                    project_id=project.id)
    credential = owner.application_credentials.create(name="vnfm-tests", user=user.id)

    json.dump({
        "projectId": project.id,
        "userId": user.id,
        "appCredential": {"id": credential.id, "secret": credential.secret},
    }, sys.stdout)


if __name__ == "__main__":
    main()
