"""Sets up the Docker private registry on the VNF's server (hook artifact).

vnfm never runs this file: the artifact's file name (private_registry_mgmt)
selects vnfm's built-in management driver private-registry-mgmt. At
instantiate_end and heal_end it logs in over SSH on the server's connection
point additionalParams.private_registry_installation_param.ssh_cp_name,
installs Docker when it is missing, loads the registry image from the
package (image_path) or pulls registry:latest, and runs

    docker run -d -p <port_no>:5000 -v /var/lib/private-registry:/var/lib/registry \
        --restart=always --name private_registry registry:latest

then waits until http://127.0.0.1:<port_no>/v2/ answers. At terminate_end it
forgets the servers' pinned SSH host keys. The file is here so that the
package declares the artifact its hooks name.

Run by hand with a registry address, it asks that registry's /v2/ endpoint
and prints the HTTP status (200, or 401 when the registry wants a login).
"""
import sys
import urllib.error
import urllib.request


def main(args):
    if len(args) != 1:
        print("usage: private_registry_mgmt.py HOST:PORT", file=sys.stderr)
        return 2
    try:
        with urllib.request.urlopen(f"http://{args[0]}/v2/", timeout=10) as res:
            print(res.status)
    except urllib.error.HTTPError as err:
        print(err.code)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
