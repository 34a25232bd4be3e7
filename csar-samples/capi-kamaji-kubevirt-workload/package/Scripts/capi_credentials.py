"""Hands a Cluster API workload cluster's credentials over (hook artifact).

vnfm never runs this file: the artifact's file name (capi_credentials) selects
vnfm's built-in management driver of the same name, which waits for the
Secret <cluster>-kubeconfig (key "value") of each Cluster of the VNF and sends
it to additionalParams.vnfm_credentials_receiver and/or registers it as a VIM
(additionalParams.vnfm_register_vim). The file is here so that the package
declares the artifact its hooks name.

Run by hand, it prints the name of the kubeconfig Secret of every Cluster in
the manifests given as arguments.
"""
import sys

import yaml


def main(paths):
    for path in paths:
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if doc and doc.get("kind") == "Cluster" and doc.get("apiVersion", "").startswith("cluster.x-k8s.io/"):
                    print(f"{doc['metadata']['name']}-kubeconfig")


if __name__ == "__main__":
    main(sys.argv[1:])
