/**
 * vnfm's own Python stand-ins for the Tacker modules a package's LCM
 * user-data class imports, written from what Tacker's functions do (never
 * Tacker's code): Tacker v1's `tacker.vnfm.lcm_user_data.abstract_user_data`
 * and `.utils` (the helpers packages call to build the `nfv` parameter from
 * the Base HOT, the VNFD and the request), and, for v2 classes,
 * user-data-standins-v2.ts. They are written into a directory put first
 * on the class's `sys.path` (user-data-class.ts), so a package runs against
 * them whether or not Tacker is installed. `FALLBACKS` are put last: small
 * stand-ins for oslo libraries user-data files import, used only where the
 * real ones are not installed.
 */

import { STANDINS_V2 } from './user-data-standins-v2.js';

const LCM_USER_DATA_UTILS = String.raw`
"""Helpers a Tacker v1 user-data class calls (vnfm's stand-in)."""
import copy
import logging

LOG = logging.getLogger(__name__)

HOT_NOVA_SERVER = 'OS::Nova::Server'
HOT_NOVA_FLAVOR = 'OS::Nova::Flavor'
HOT_NEUTRON_PORT = 'OS::Neutron::Port'
AUTO_SCALING_GROUP = 'OS::Heat::AutoScalingGroup'
HOT_CINDER_VOLUME = 'OS::Cinder::Volume'
SUPPORTED_HOT_TYPE = [HOT_NOVA_SERVER, HOT_NOVA_FLAVOR, HOT_NEUTRON_PORT, HOT_CINDER_VOLUME]
PORT_SERVER_TYPE = [HOT_NOVA_SERVER, HOT_NEUTRON_PORT, HOT_CINDER_VOLUME]

_UNITS = {'B': 1, 'kB': 10 ** 3, 'KiB': 2 ** 10, 'MB': 10 ** 6, 'MiB': 2 ** 20,
          'GB': 10 ** 9, 'GiB': 2 ** 30, 'TB': 10 ** 12, 'TiB': 2 ** 40}


def _unit_bytes(unit):
    if unit in _UNITS:
        return _UNITS[unit]
    for name, size in _UNITS.items():
        if name.upper() == unit.upper():
            return size
    raise ValueError('unknown unit of size: %s' % unit)


def _size_in(text, unit):
    """'512 MB' in unit, as a whole number (rounded down)."""
    number, given = str(text).split()
    return int(float(number) * _unit_bytes(given) / _unit_bytes(unit))


def _nfv_slot(params, path):
    """Adds nfv.<kind>.<name>.<key> to params for a get_param path of four."""
    if not isinstance(path, list) or len(path) != 4:
        return
    kind = params.get(path[0], {}).get(path[1])
    if kind is not None and path[2] not in kind:
        kind[path[2]] = {}


def _get_param(value):
    return value.get('get_param') if isinstance(value, dict) else None


def _read_templates(base_hot_dict, types):
    params = {'nfv': {'VDU': {}, 'CP': {}}}
    for template in base_hot_dict.values():
        if not isinstance(template, dict) or not (template.get('parameters') or {}).get('nfv'):
            continue
        for resource in (template.get('resources') or {}).values():
            kind = resource.get('type')
            props = resource.get('properties') or {}
            if kind == AUTO_SCALING_GROUP:
                nested = (props.get('resource') or {}).get('properties') or {}
                for value in nested.values():
                    _nfv_slot(params, _get_param(value))
                continue
            if kind not in types:
                continue
            for value in props.values():
                _nfv_slot(params, _get_param(value))
            if kind == HOT_NOVA_SERVER:
                for boot in props.get('block_device_mapping_v2') or []:
                    _nfv_slot(params, _get_param(boot.get('image')))
    return params


def create_initial_param_dict(base_hot_dict):
    """{'nfv': {'VDU': {vdu: {key: {}}}, 'CP': {cp: {key: {}}}}}: what the templates read of nfv."""
    return _read_templates(base_hot_dict, SUPPORTED_HOT_TYPE)


def create_initial_param_server_port_dict(base_hot_dict):
    """As create_initial_param_dict, for servers, ports and volumes only."""
    return _read_templates(base_hot_dict, PORT_SERVER_TYPE)


def create_final_param_dict(param_dict, vdu_flavor_dict, vdu_image_dict, cpd_vl_dict):
    """The initial dict with each VDU's flavor and image, each CP's network and fixed_ips."""
    final = copy.deepcopy(param_dict)
    nfv = final.get('nfv', {})
    for name, vdu in nfv.get('VDU', {}).items():
        vdu['flavor'] = vdu_flavor_dict.get(name)
        vdu['image'] = vdu_image_dict.get(name)
    if cpd_vl_dict:
        for name, cp in nfv.get('CP', {}).items():
            link = cpd_vl_dict.get(name)
            if 'network' in link:
                cp['network'] = link.get('network')
            if 'fixed_ips' in link:
                cp['fixed_ips'] = list(link.get('fixed_ips'))
    return final


def _node_templates(vnfd_dict):
    return ((vnfd_dict or {}).get('topology_template') or {}).get('node_templates') or {}


def create_vdu_flavor_dict(vnfd_dict):
    """VDU -> {'vcpus', 'ram' (MiB), 'disk' (GiB)} from virtual_compute."""
    out = {}
    for name, node in _node_templates(vnfd_dict).items():
        props = ((node.get('capabilities') or {}).get('virtual_compute') or {}).get('properties') or {}
        if not props:
            continue
        flavor = {}
        if 'virtual_cpu' in props:
            flavor['vcpus'] = props['virtual_cpu']['num_virtual_cpu']
        if 'virtual_memory' in props:
            flavor['ram'] = _size_in(props['virtual_memory']['virtual_mem_size'], 'MiB')
        if 'virtual_local_storage' in props:
            flavor['disk'] = _size_in(props['virtual_local_storage'][0]['size_of_storage'], 'GiB')
        out[name] = flavor
    return out


def create_vdu_image_dict(grant_info):
    """VDU -> the id of the image made for it (the last resource granted)."""
    out = {}
    for name, resources in (grant_info or {}).items():
        for resource in resources:
            out[name] = resource.resource_identifier
    return out


def create_cpd_vl_dict(base_hot_dict, inst_req_info):
    """External CP -> the id of its virtual link's network, for CPs a template has as a resource."""
    out = {}
    for link in inst_req_info.ext_virtual_links or []:
        for cp in link.ext_cps or []:
            if any(isinstance(t, dict) and cp.cpd_id in (t.get('resources') or {}) for t in base_hot_dict.values()):
                out[cp.cpd_id] = link.resource_id
    return out


def get_diff_base_hot_param_from_api(base_hot_dict, inst_req_info):
    """additionalParams whose names are parameters of the top template (and whose values are set)."""
    given = inst_req_info.additional_params or {}
    declared = base_hot_dict['heat_template'].get('parameters') or {}
    return {name: given[name] for name in declared if given.get(name)}


def create_vdu_flavor_capability_name_dict(vnfd_dict):
    """VDU -> requested_additional_capability_name (the Nova flavor's name)."""
    out = {}
    for name, node in _node_templates(vnfd_dict).items():
        props = ((node.get('capabilities') or {}).get('virtual_compute') or {}).get('properties') or {}
        wanted = (props.get('requested_additional_capabilities') or {}).get('properties') or {}
        if 'requested_additional_capability_name' in wanted:
            out[name] = wanted['requested_additional_capability_name']
    return out


def create_sw_image_dict(vnfd_dict):
    """Node -> sw_image_data.name, for every node with an image."""
    out = {}
    for name, node in _node_templates(vnfd_dict).items():
        image = (node.get('properties') or {}).get('sw_image_data') or {}
        if 'name' in image:
            out[name] = image['name']
    return out


def _fixed_ips(ext_cp):
    out = []
    for config in ext_cp.cp_config or []:
        for proto in config.cp_protocol_data or []:
            ipoe = proto.ip_over_ethernet
            for address in (ipoe.ip_addresses if ipoe else None) or []:
                entry = {}
                if address.subnet_id:
                    entry['subnet'] = address.subnet_id
                for fixed in address.fixed_addresses or []:
                    entry['ip_address'] = fixed
                if entry:
                    out.append(entry)
    return out


def create_network_dict(inst_req_info, param_dict):
    """External CP the templates read -> {'network', 'fixed_ips'} from the request."""
    out = {}
    read = param_dict.get('nfv', {}).get('CP') or {}
    for link in inst_req_info.ext_virtual_links or []:
        for cp in link.ext_cps or []:
            if cp.cpd_id in read:
                out[cp.cpd_id] = {'network': link.resource_id, 'fixed_ips': _fixed_ips(cp)}
    return out


def _policies(vnfd_dict, kind):
    found = {}
    for entry in ((vnfd_dict or {}).get('topology_template') or {}).get('policies') or []:
        for name, policy in entry.items():
            if policy.get('type') == kind:
                found[name] = policy
    return found


def _scale_groups(base_hot_dict, vnfd_dict, level_id):
    groups = [n for n, r in (base_hot_dict['heat_template'].get('resources') or {}).items() if r.get('type') == AUTO_SCALING_GROUP]
    if not groups:
        return {}
    data = {}
    for policy in _policies(vnfd_dict, 'tosca.policies.nfv.VduScalingAspectDeltas').values():
        props = policy['properties']
        num = None
        for delta in props['deltas'].values():
            num = delta['number_of_instances']
        data[props['aspect']] = {'vdu': policy['targets'], 'num': num}
    for aspect, info in data.items():
        for policy in _policies(vnfd_dict, 'tosca.policies.nfv.ScalingAspects').values():
            info['maxLevel'] = policy['properties']['aspects'][aspect].get('max_scale_level')
        for policy in _policies(vnfd_dict, 'tosca.policies.nfv.VduInitialDelta').values():
            if any(t in info['vdu'] for t in policy['targets']):
                info['initialNum'] = policy['properties']['initial_delta']['number_of_instances']
        for policy in _policies(vnfd_dict, 'tosca.policies.nfv.InstantiationLevels').values():
            level = level_id or policy['properties']['default_level']
            start = policy['properties']['levels'][level]['scale_info'][aspect]['scale_level']
            info['initialLevel'] = start
            info['default'] = info['initialNum'] + info['num'] * start
    return data


def create_desired_capacity_dict(base_hot_dict, vnfd_dict, inst_req_info):
    """Aspect -> the members its group starts with at the requested instantiation level."""
    level = getattr(inst_req_info, 'instantiation_level_id', None)
    return {name: info['default'] for name, info in _scale_groups(base_hot_dict, vnfd_dict, level).items() if 'default' in info}


def get_desired_capacity_dict(base_hot_dict, vnfd_dict, inst_vnf_info):
    """Aspect -> the members its group has at the instance's scale level."""
    out = {}
    for name, info in _scale_groups(base_hot_dict, vnfd_dict, None).items():
        for status in inst_vnf_info.scale_status or []:
            if status.aspect_id == name:
                out[name] = info['initialNum'] + info['num'] * status.scale_level
    return out
`;

const ABSTRACT_USER_DATA = String.raw`
"""The base class of a Tacker v1 user-data class (vnfm's stand-in)."""
import abc

from tacker.extensions import vnfm


class AbstractUserData(object, metaclass=abc.ABCMeta):

    @staticmethod
    @abc.abstractmethod
    def instantiate(base_hot_dict=None, vnfd_dict=None, inst_req_info=None, grant_info=None):
        """Returns the Heat stack's parameters, a dict."""
        raise vnfm.LCMUserDataFailed(reason='the user-data class does not implement instantiate')
`;

const EXTENSIONS_VNFM = String.raw`
"""The exceptions a user-data class may raise (vnfm's stand-in)."""


class LCMUserDataFailed(Exception):
    def __init__(self, reason=None, **kwargs):
        super().__init__('LCM user data failed: %s' % reason)
        self.reason = reason
`;

/** Python modules by path under the stand-ins directory. */
export const STANDINS: Readonly<Record<string, string>> = {
  'tacker/__init__.py': '',
  'tacker/extensions/__init__.py': '',
  'tacker/extensions/vnfm.py': EXTENSIONS_VNFM,
  'tacker/vnfm/__init__.py': '',
  'tacker/vnfm/lcm_user_data/__init__.py': '',
  'tacker/vnfm/lcm_user_data/abstract_user_data.py': ABSTRACT_USER_DATA,
  'tacker/vnfm/lcm_user_data/constants.py': 'USER_DATA_TIMEOUT = 60\n',
  'tacker/vnfm/lcm_user_data/utils.py': LCM_USER_DATA_UTILS,
  ...STANDINS_V2,
};

/** Stand-ins for libraries user-data files import, after everything else on sys.path. */
export const FALLBACKS: Readonly<Record<string, string>> = {
  'oslo_log/__init__.py': '',
  'oslo_log/log.py': 'import logging\n\n\ndef getLogger(name=None):\n    return logging.getLogger(name)\n',
  'oslo_serialization/__init__.py': '',
  'oslo_serialization/jsonutils.py': 'import json\n\ndumps = json.dumps\nloads = json.loads\n\n\ndef dump_as_bytes(value):\n    return json.dumps(value).encode()\n',
};
