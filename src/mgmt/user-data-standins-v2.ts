/**
 * vnfm's own Python stand-ins for the Tacker v2 modules a package's
 * user-data class imports (sol_refactored's userdata_utils, with
 * common_script_utils' helpers, vnfd_utils.Vnfd and
 * vnf_instance_utils.json_merge_patch), written from what Tacker's functions
 * do. The Vnfd stand-in reads what vnfm read of the package (the flavour's
 * definitions and Base HOT), handed over by the runner as `vnfd_utils.GIVEN`.
 */

const USERDATA_UTILS_V2 = String.raw`
"""The base class of a Tacker v2 user-data class (vnfm's stand-in); its helpers are common_script_utils'."""
import abc

from tacker.sol_refactored.common.common_script_utils import *  # noqa: F401,F403


class AbstractUserData(metaclass=abc.ABCMeta):
    """Each method returns the Heat stack's fields: {'parameters': {'nfv': ...}} (template and files optional)."""

    @staticmethod
    @abc.abstractmethod
    def instantiate(req, inst, grant_req, grant, tmp_csar_dir):
        raise NotImplementedError()

    @staticmethod
    @abc.abstractmethod
    def scale(req, inst, grant_req, grant, tmp_csar_dir):
        raise NotImplementedError()

    @staticmethod
    @abc.abstractmethod
    def scale_rollback(req, inst, grant_req, grant, tmp_csar_dir):
        raise NotImplementedError()

    @staticmethod
    @abc.abstractmethod
    def change_ext_conn(req, inst, grant_req, grant, tmp_csar_dir):
        raise NotImplementedError()

    @staticmethod
    @abc.abstractmethod
    def change_ext_conn_rollback(req, inst, grant_req, grant, tmp_csar_dir):
        raise NotImplementedError()

    @staticmethod
    @abc.abstractmethod
    def heal(req, inst, grant_req, grant, tmp_csar_dir):
        raise NotImplementedError()

    @staticmethod
    @abc.abstractmethod
    def change_vnfpkg(req, inst, grant_req, grant, tmp_csar_dir):
        raise NotImplementedError()

    @staticmethod
    @abc.abstractmethod
    def change_vnfpkg_rollback(req, inst, grant_req, grant, tmp_csar_dir):
        raise NotImplementedError()
`;

const COMMON_SCRIPT_UTILS = String.raw`
"""Helpers a Tacker v2 user-data class calls (vnfm's stand-in)."""
from tacker.sol_refactored.common import vnfd_utils


def get_vnfd(vnfd_id, csar_dir):
    vnfd = vnfd_utils.Vnfd(vnfd_id)
    vnfd.init_from_csar_dir(csar_dir)
    return vnfd


def init_nfv_dict(hot_template):
    """{'VDU': {vdu: {key: None}}, 'CP': {...}}: every get_param [nfv, ...] of the resources' properties."""
    nfv = {}

    def walk(value):
        if isinstance(value, dict):
            for key, item in value.items():
                if key == 'get_param':
                    if isinstance(item, list) and len(item) >= 4 and item[0] == 'nfv':
                        parent = nfv
                        for step in item[1:-1]:
                            parent = parent.setdefault(step, {})
                        parent[item[-1]] = None
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for resource in (hot_template.get('resources') or {}).values():
        walk(resource.get('properties') or {})
    return nfv


def _assets(grant, kind):
    return ((grant or {}).get('vimAssets') or {}).get(kind) or []


def get_param_flavor(vdu_name, flavour_id, vnfd, grant):
    for flavor in _assets(grant, 'computeResourceFlavours'):
        if flavor.get('vnfdVirtualComputeDescId') == vdu_name:
            return flavor.get('vimFlavourId')
    return vnfd.get_compute_flavor(flavour_id, vdu_name)


def get_param_image(vdu_name, flavour_id, vnfd, grant, fallback_vnfd=True):
    for image in _assets(grant, 'softwareImages'):
        if image.get('vnfdSoftwareImageId') == vdu_name:
            return image.get('vimSoftwareImageId')
    if fallback_vnfd:
        return vnfd.get_sw_image(flavour_id).get(vdu_name)
    return None


def get_param_zone(vdu_name, grant_req, grant):
    grant = grant or {}
    zones = {z.get('id'): z.get('zoneId') for z in grant.get('zones') or []}
    templates = {r.get('id'): r.get('resourceTemplateId') for r in (grant_req or {}).get('addResources') or []}
    for res in grant.get('addResources') or []:
        if 'zoneId' in res and templates.get(res.get('resourceDefinitionId')) == vdu_name:
            return zones.get(res['zoneId'])
    return None


def get_param_zone_by_vnfc(res_id, grant):
    grant = grant or {}
    zones = {z.get('id'): z.get('zoneId') for z in grant.get('zones') or []}
    for res in grant.get('addResources') or []:
        if res.get('resourceDefinitionId') == res_id:
            return zones.get(res.get('zoneId'))
    return None


def get_current_capacity(vdu_name, inst):
    vnfcs = ((inst or {}).get('instantiatedVnfInfo') or {}).get('vnfcResourceInfo') or []
    return sum(1 for c in vnfcs if c.get('vduId') == vdu_name)


def get_param_capacity(vdu_name, inst, grant_req):
    count = get_current_capacity(vdu_name, inst)
    for res in (grant_req or {}).get('addResources') or []:
        if res.get('type') == 'COMPUTE' and res.get('resourceTemplateId') == vdu_name:
            count += 1
    for res in (grant_req or {}).get('removeResources') or []:
        if res.get('type') == 'COMPUTE' and res.get('resourceTemplateId') == vdu_name:
            count -= 1
    return count


def _fixed_ips(ext_cp):
    out = []
    configs = ext_cp.get('cpConfig') or {}
    for config in (configs.values() if isinstance(configs, dict) else configs):
        for proto in config.get('cpProtocolData') or []:
            for address in (proto.get('ipOverEthernet') or {}).get('ipAddresses') or []:
                entry = {}
                if address.get('fixedAddresses'):
                    entry['ip_address'] = str(address['fixedAddresses'][0])
                if 'subnetId' in address:
                    entry['subnet'] = address['subnetId']
                if entry:
                    out.append(entry)
    return out


def _ext_cp(cp_name, grant, req):
    for link in ((grant or {}).get('extVirtualLinks') or []) + ((req or {}).get('extVirtualLinks') or []):
        for cp in link.get('extCps') or []:
            if cp.get('cpdId') == cp_name:
                return link, cp
    return None, None


def get_param_network(cp_name, grant, req):
    link, _ = _ext_cp(cp_name, grant, req)
    return link.get('resourceId') if link else None


def get_param_fixed_ips(cp_name, grant, req):
    _, cp = _ext_cp(cp_name, grant, req)
    return _fixed_ips(cp) if cp else None


def get_param_network_from_inst(cp_name, inst):
    for link in ((inst or {}).get('instantiatedVnfInfo') or {}).get('extVirtualLinkInfo') or []:
        for cp in link.get('currentVnfExtCpData') or []:
            if cp.get('cpdId') == cp_name:
                return (link.get('resourceHandle') or {}).get('resourceId')
    return None


def get_param_fixed_ips_from_inst(cp_name, inst):
    for link in ((inst or {}).get('instantiatedVnfInfo') or {}).get('extVirtualLinkInfo') or []:
        for cp in link.get('currentVnfExtCpData') or []:
            if cp.get('cpdId') == cp_name:
                return _fixed_ips(cp)
    return None
`;

const VNFD_UTILS = String.raw`
"""The VNFD as a Tacker v2 user-data class reads it (vnfm's stand-in): what vnfm read of the package, handed over as GIVEN."""
import copy

# Set by vnfm before the class is imported: {'vnfdId', 'flavours': {id: {'definitions', 'base_hot'}}}.
GIVEN = {}

VDU = 'tosca.nodes.nfv.Vdu.Compute'
STORAGE = 'tosca.nodes.nfv.Vdu.VirtualBlockStorage'
VDU_CP = 'tosca.nodes.nfv.VduCp'
VL = 'tosca.nodes.nfv.VnfVirtualLink'


class Vnfd(object):

    def __init__(self, vnfd_id):
        self.vnfd_id = vnfd_id
        self.csar_dir = None

    def init_from_csar_dir(self, csar_dir):
        self.csar_dir = csar_dir

    def _flavour(self, flavour_id):
        found = (GIVEN.get('flavours') or {}).get(flavour_id)
        if found is None:
            raise KeyError('flavour %s of VNFD %s' % (flavour_id, self.vnfd_id))
        return found

    def get_vnfd_flavour(self, flavour_id):
        return copy.deepcopy(self._flavour(flavour_id)['definitions'])

    def get_base_hot(self, flavour_id):
        return copy.deepcopy(self._flavour(flavour_id)['base_hot'])

    def get_node_templates(self, flavour_id):
        return (self.get_vnfd_flavour(flavour_id).get('topology_template') or {}).get('node_templates') or {}

    def _of_type(self, flavour_id, kind):
        return {n: v for n, v in self.get_node_templates(flavour_id).items() if v.get('type') == kind}

    def get_vdu_nodes(self, flavour_id):
        return self._of_type(flavour_id, VDU)

    def get_storage_nodes(self, flavour_id):
        return self._of_type(flavour_id, STORAGE)

    def get_vducp_nodes(self, flavour_id):
        return self._of_type(flavour_id, VDU_CP)

    def get_virtual_link_nodes(self, flavour_id):
        return self._of_type(flavour_id, VL)

    def get_vdu_cps(self, flavour_id, vdu_name):
        return [n for n, v in self.get_vducp_nodes(flavour_id).items()
                if any(r.get('virtual_binding') == vdu_name for r in v.get('requirements') or [])]

    def get_vdu_storages(self, node):
        return [r['virtual_storage'] for r in node.get('requirements') or [] if 'virtual_storage' in r]

    def get_compute_flavor(self, flavour_id, vdu_name):
        node = self.get_node_templates(flavour_id).get(vdu_name) or {}
        props = ((node.get('capabilities') or {}).get('virtual_compute') or {}).get('properties') or {}
        wanted = (props.get('requested_additional_capabilities') or {}).get('properties') or {}
        return wanted.get('requested_additional_capability_name')

    def get_sw_image(self, flavour_id):
        return {n: v['properties']['sw_image_data']['name'] for n, v in self.get_node_templates(flavour_id).items()
                if v.get('type') in (VDU, STORAGE) and (v.get('properties') or {}).get('sw_image_data')}

    def get_sw_image_data(self, flavour_id):
        return {n: v['properties']['sw_image_data'] for n, v in self.get_node_templates(flavour_id).items()
                if v.get('type') in (VDU, STORAGE) and (v.get('properties') or {}).get('sw_image_data')}
`;

const VNF_INSTANCE_UTILS = String.raw`
"""vnf_instance_utils.json_merge_patch (vnfm's stand-in)."""


def json_merge_patch(target, patch):
    """RFC 7386: patch merged over target."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = json_merge_patch(out.get(key), value)
    return out
`;

/** The v2 modules, by path under the stand-ins directory. */
export const STANDINS_V2: Readonly<Record<string, string>> = {
  'tacker/sol_refactored/__init__.py': '',
  'tacker/sol_refactored/common/__init__.py': '',
  'tacker/sol_refactored/common/common_script_utils.py': COMMON_SCRIPT_UTILS,
  'tacker/sol_refactored/common/vnfd_utils.py': VNFD_UTILS,
  'tacker/sol_refactored/common/vnf_instance_utils.py': VNF_INSTANCE_UTILS,
  'tacker/sol_refactored/infra_drivers/__init__.py': '',
  'tacker/sol_refactored/infra_drivers/openstack/__init__.py': '',
  'tacker/sol_refactored/infra_drivers/openstack/userdata_utils.py': USERDATA_UTILS_V2,
};
