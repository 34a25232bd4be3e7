#!/usr/bin/python3
"""heat-all for the tests, with one fix applied at start-up.

Debian bookworm's security update of python3-oslo.messaging (14.0.3-0+deb12u1)
sanitises the context of every notification: it keeps a list of safe keys and
rebuilds the context from them with ``ctxt.__class__.from_dict()``. Heat runs
resource signals under a StoredContext (the stack's trust), so the rebuilt copy
is a StoredContext without trust, password or token; reading its roles makes it
ask Keystone for them, without credentials, and the notification fails with
"Keystone API connection failed, no password trust or auth_token!". The
notification an OS::Heat::AutoScalingGroup sends before it resizes is one of
them: every OS::Heat::ScalingPolicy signal fails, and the group keeps its size.

The fix: a StoredContext that holds no credential at all (only such a rebuilt
copy) keeps the roles and domains it was built with instead of asking Keystone.
Any other StoredContext loads them as before.

Usage: heat-launch.py --config-file heat.conf (the arguments of heat-all).
"""
import sys

# Imported first: it monkey-patches eventlet as the heat-all entry point does.
from heat.cmd import all as heat_all
from heat.common import context as heat_context

_load_from_keystone = heat_context.StoredContext._load_keystone_data


def _load_keystone_data(self):
    credentials = (self.trust_id, self.password, self.auth_token, self.auth_token_info)
    if any(credentials):
        return _load_from_keystone(self)
    # Nothing to authenticate with: what the copy was built with is all there is.
    self._keystone_loaded = True
    return None


heat_context.StoredContext._load_keystone_data = _load_keystone_data

sys.argv[0] = "heat-all"
sys.exit(heat_all.main())
