# Management driver of the Kubernetes cluster VNF.
#
# vnfm does not run this file: it recognises the artifact's name
# (kubernetes_mgmt -> its built-in "kubernetes-mgmt" driver) and runs that
# driver at each hook the VNFD declares. The file is here so that the package
# is complete for a VNF manager that runs the artifact itself, which would put
# its own driver in this place.
raise SystemExit("kubernetes_mgmt.py: vnfm runs its built-in kubernetes-mgmt driver instead of this file")
