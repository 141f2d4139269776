"""URDF loader: the dynamics of a fixed-base robot tree from a URDF document.

Only what the dynamics needs is read: ``<link>`` (its ``<inertial>``), ``<joint>`` (type,
parent, child, ``<origin>``, ``<axis>``, ``<limit>``, ``<dynamics>``, ``<mimic>``) and simple
``<transmission>`` elements (gear ratio and rotor inertia); and, for the viewer, each link's
``<visual>`` into ``model.visuals`` (:mod:`screwdyn.io.visuals`: meshes are found, not read; a mesh
not found is a warning) and each ``<collision>`` into ``model.collisions`` (:mod:`screwdyn.io.collisions`:
meshes as their convex hulls). ``<gazebo>``, ``<sensor>`` and any other element are ignored. What a robot's file gets wrong but Pinocchio loads, screwdyn loads, with one warning per
element saying what was done (``strict=True`` refuses it; see :func:`load_urdf`).

URDF conventions honoured (see the URDF specification, ``wiki.ros.org/urdf/XML``):

* ``<inertial><origin xyz rpy>``: the inertia tensor is written in the inertial frame, rotated
  by ``rpy`` from the link frame, so the inertia about the CoM in link axes is ``R I R^T``;
  the centre of mass is ``xyz``.
* ``<joint><origin xyz rpy>`` is the pose of the child link in the parent link at ``q = 0``;
  ``rpy`` is ``Rz(yaw) Ry(pitch) Rx(roll)``.
* ``<axis xyz>`` defaults to ``1 0 0`` and is normalised.
* A link without ``<inertial>`` is massless.

Documents are parsed only with :mod:`defusedxml`: DTDs, entity declarations and external
references are refused (billion-laughs and XXE attacks), and every number is parsed
strictly, so a malformed file fails with a :class:`~screwdyn.errors.URDFError` naming the
element and attribute at fault.
"""
from __future__ import annotations

import importlib.metadata
import os
import re
import sys
import warnings
from pathlib import Path
from xml.etree.ElementTree import ParseError

import numpy as np
import defusedxml
import defusedxml.ElementTree as DET

from ..errors import InertiaWarning, ModelError, URDFError, URDFWarning
from ..inertia import RigidBody, check_inertia, clamp_principal_moments, compound
from ..model import Model, ModelBuilder
from ..spatial import rotation_from_rpy, transform

__all__ = ["load_urdf", "example_robot_data_path", "EXAMPLE_ROBOTS"]

_SUPPORTED = ("revolute", "continuous", "prismatic", "fixed", "floating")
_MIMIC_MODES = ("constraint", "independent", "error")
# A negative principal moment of a link at most this fraction of the largest principal moment of the
# body the link is part of (its fixed-joint group) is round-off: clamped to zero (see load_urdf).
ROUNDOFF = 1e-6

# A decimal number as the URDF specification (and urdfdom) writes them; no "nan", no "1_000".
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")
_INF = re.compile(r"[+-]?inf(?:inity)?\Z", re.IGNORECASE)
# Numbers of a larger magnitude are refused (limits excepted, which are only compared): the products
# the dynamics forms of two or three of them would overflow float64.
_HUGE = 1e150


# ---------------------------------------------------------------------------- number parsing
def _where(owner: str, tag: str, attr: str, raw: str) -> str:
    return f'{owner} <{tag} {attr}="{raw}">'


def _parse_numbers(raw: str, count: int, where: str, allow_inf: bool = False) -> np.ndarray:
    """``count`` whitespace-separated numbers from ``raw``, or a :class:`URDFError` naming ``where``."""
    tokens = raw.split()
    out = []
    for tok in tokens:
        if _NUMBER.match(tok):
            val = float(tok)
            if not np.isfinite(val):
                raise URDFError(f"{where}: {tok!r} overflows to infinity")
            if abs(val) > _HUGE and not allow_inf:
                raise URDFError(f"{where}: {tok!r} is too large (above {_HUGE:g} in magnitude, the products of the "
                                "dynamics would overflow float64)")
        elif _INF.match(tok):
            if not allow_inf:
                raise URDFError(f"{where}: {tok!r} is infinite; a finite number is required")
            val = float(tok)
        elif tok.lower() in ("nan", "+nan", "-nan"):
            raise URDFError(f"{where}: {tok!r} is NaN; a finite number is required")
        else:
            raise URDFError(f"{where}: {tok!r} is not a number")
        out.append(val)
    if len(out) != count:
        plural = "number" if count == 1 else "numbers"
        raise URDFError(f"{where}: expected {count} {plural}, got {len(out)}")
    return np.array(out, dtype=float)


def _attr_numbers(el, attr: str, count: int, default, owner: str, allow_inf: bool = False) -> np.ndarray:
    """Attribute ``attr`` of element ``el`` as ``count`` numbers; ``default`` when absent
    (``default=None``: the attribute is required)."""
    raw = el.get(attr)
    if raw is None:
        if default is None:
            raise URDFError(f"{owner} <{_local(el.tag)}>: missing required attribute {attr!r}")
        return np.array(default, dtype=float).reshape(count)
    return _parse_numbers(raw, count, _where(owner, _local(el.tag), attr, raw), allow_inf)


def _attr_number(el, attr: str, default, owner: str, allow_inf: bool = False) -> float:
    return float(_attr_numbers(el, attr, 1, default, owner, allow_inf)[0])


def _local(tag) -> str:
    """The tag without an XML namespace (``{ns}robot`` -> ``robot``)."""
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else str(tag)


def _children(el, tag: str):
    return [c for c in el if _local(c.tag) == tag]


def _one(el, tag: str, owner: str, required: bool = False):
    """The unique child ``<tag>`` of ``el`` (None when absent and not required)."""
    found = _children(el, tag)
    if len(found) > 1:
        raise URDFError(f"{owner}: {len(found)} <{tag}> elements, expected at most one")
    if not found:
        if required:
            raise URDFError(f"{owner}: missing required <{tag}> element")
        return None
    return found[0]


def _origin(el, owner: str) -> np.ndarray:
    """The pose of an ``<origin xyz rpy>`` child of ``el`` (identity when absent)."""
    o = _one(el, "origin", owner)
    if o is None:
        return np.eye(4)
    xyz = _attr_numbers(o, "xyz", 3, (0.0, 0.0, 0.0), owner)
    rpy = _attr_numbers(o, "rpy", 3, (0.0, 0.0, 0.0), owner)
    return transform(rotation_from_rpy(rpy), xyz)


# ---------------------------------------------------------------------------- reading the XML
def _read_source(source):
    """``(data, label)``: the document text or bytes, and how to name it in messages."""
    if isinstance(source, bytes):
        if not source.strip():
            raise URDFError("empty URDF document")
        return source, "URDF string"
    if isinstance(source, str):
        stripped = source.strip()
        if not stripped:
            raise URDFError("empty URDF document (got an empty or blank string, expected a path or XML text)")
        if stripped.startswith("<"):
            return source, "URDF string"
        path = Path(source)
    elif isinstance(source, os.PathLike):
        path = Path(source)
    else:
        raise TypeError(f"load_urdf: source must be a path or an XML string, got {type(source).__name__}")
    if not path.exists():
        raise URDFError(f"URDF file {str(path)!r} does not exist")
    if path.is_dir():
        raise URDFError(f"URDF path {str(path)!r} is a directory, not a file")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise URDFError(f"URDF file {str(path)!r} cannot be read: {e}") from e
    if not data.strip():
        raise URDFError(f"URDF file {str(path)!r} is empty")
    return data, f"URDF file {str(path)!r}"


def _parse_xml(data, label, error=URDFError, fmt="URDF"):
    """The root element of the document; ``error`` (naming ``label``) when it is malformed or hostile."""
    try:
        return DET.fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except defusedxml.DTDForbidden as e:
        raise error(f"{label} declares a DTD (<!DOCTYPE ...>); refused: DTDs allow entity-expansion "
                    f"('billion laughs') and external-entity attacks, and {fmt} does not need them") from e
    except defusedxml.EntitiesForbidden as e:
        raise error(f"{label} declares an XML entity ({e.name!r}); refused: entities allow "
                    "entity-expansion ('billion laughs') and external-entity attacks") from e
    except defusedxml.ExternalReferenceForbidden as e:
        raise error(f"{label} refers to an external resource ({e.sysid!r}); refused "
                    "(external-entity attack)") from e
    except defusedxml.DefusedXmlException as e:
        raise error(f"{label} uses a forbidden XML construct: {e}") from e
    except ParseError as e:
        raise error(f"{label} is not well-formed XML: {e}") from e
    except UnicodeError as e:   # a str holding what no encoding can write (a lone surrogate)
        raise error(f"{label} is not valid text: {e}") from e


# ---------------------------------------------------------------------------- the loader
def load_urdf(source, *, gravity=(0.0, 0.0, -9.81), strict=False, mimic="constraint", root=None,
              floating_base=False) -> Model:
    """Load a robot tree from a URDF file path or XML string.

    Parameters
    ----------
    source:
        A path (``str`` or :class:`pathlib.Path`) or the URDF text itself (a string whose
        stripped start is ``<``).
    gravity:
        Gravity in the base frame [m/s^2].
    strict:
        Refuse what is otherwise loaded with a warning (:class:`~screwdyn.errors.InertiaWarning`,
        :class:`~screwdyn.errors.URDFWarning`, one per element, naming it and what was done):

        * principal moments breaking the triangle inequality (kept as written);
        * an inertia with a negative principal moment: clamped to zero (the nearest positive
          semi-definite inertia, axes kept) when it is round-off, at most ``ROUNDOFF = 1e-6``
          of the largest principal moment of the body the link is merged into (its group of
          links joined by fixed joints, the fixed base included); else kept as written, and
          whatever needs a positive-definite mass matrix (``forward_dynamics``,
          ``mass_matrix_inverse``) raises :class:`~screwdyn.errors.ModelError` if ``M`` is not;
        * a ``<mimic>`` whose leader is no moving joint of the robot: dropped (the joint stays an
          independent degree of freedom);
        * a ``<transmission>`` naming a joint the robot does not have: dropped.
    mimic:
        ``"constraint"`` (default): a ``<mimic>`` joint stays a degree of freedom of the tree,
        coupled to its leader by a :class:`~screwdyn.JointCoupling` on ``model.constraints``,
        ``q_mimic - multiplier q_leader = offset`` (named after the mimic joint), which the
        constrained functions apply; the unconstrained ones (``inverse_dynamics``,
        ``mass_matrix``, ``forward_dynamics``) give the open tree's. ``"independent"``: no
        constraint, and a :class:`~screwdyn.errors.URDFWarning` lists the mimic joints.
        ``"error"``: refuse mimic joints. In every mode ``model.mimic`` records each mimic
        joint's ``(leader, multiplier, offset)``, and ``q`` has every moving joint of the URDF
        (Pinocchio's ``buildModelFromUrdf`` layout; Pinocchio 3's ``mimic=True`` instead removes
        the mimic joint from ``q``, which makes ``q`` differ from the URDF's joint list and from
        the joint states a robot reports). A ``<mimic>`` on a fixed joint is ignored (it has no
        degree of freedom to constrain).
    root:
        The base link; by default the unique link that is no joint's child.
    floating_base:
        ``False`` (default): the root link is fixed to the world (it is the model's base and its
        inertia does not enter the dynamics). ``True``: the root link floats, joined to a new
        base ``"world"`` by a free-flyer joint named ``"root_joint"``, first in
        ``model.joint_names`` (as Pinocchio's ``buildModelFromUrdf(path, JointModelFreeFlyer())``):
        ``q`` starts with the root link's position and unit quaternion ``(x, y, z, qx, qy, qz, qw)``
        in the world, ``qd`` with its twist in its own frame ``(omega, v)``.

    URDF joint types: revolute, continuous, prismatic, fixed, and floating (a free-flyer, 6
    degrees of freedom); a planar joint is refused (not modelled).

    Fixed joints are merged: the child link's inertia is lumped into the moving body that
    carries it and the link is kept as a frame (``model.frame_names``). Bodies are ordered
    depth-first, children in declaration order.

    Raises :class:`~screwdyn.errors.URDFError` (a :class:`ValueError`) on a malformed or
    hostile document, naming the element at fault.
    """
    if mimic not in _MIMIC_MODES:
        raise ValueError(f"load_urdf: mimic must be one of {_MIMIC_MODES}, got {mimic!r}")
    data, label = _read_source(source)
    robot = _parse_xml(data, label)
    if _local(robot.tag) != "robot":
        raise URDFError(f"{label}: the root element is <{_local(robot.tag)}>, expected <robot>")
    name = robot.get("name")
    if name is None or not name.strip():
        raise URDFError(f"{label}: <robot> has no name attribute")

    links = _read_links(robot)
    joints = _read_joints(robot)
    _drop_unknown_leaders(joints, strict)
    drives = _read_transmissions(robot, {j["name"]: j["type"] for j in joints}, strict)

    # A <mimic> on a fixed joint constrains nothing (no degree of freedom): it is ignored.
    mimics = [j["name"] for j in joints if j["mimic"] is not None and j["type"] != "fixed"]
    if mimics and mimic == "error":
        raise URDFError(f"joint {mimics[0]!r} has a <mimic> tag (mimic joints: {mimics}); refused because "
                        "mimic='error' (mimic='constraint' couples them, mimic='independent' leaves them free)")

    child_links = {j["child"] for j in joints}
    if root is None:
        roots = [ln for ln in links if ln not in child_links]
        if not roots:
            if not links:
                raise URDFError(f"robot {name!r} has no <link>")
            raise URDFError(f"robot {name!r} has no root link: every link is the child of a joint "
                            "(the joints form a loop)")
        base = roots[0]  # several roots: the builder reports them all
    else:
        if root not in links:
            raise URDFError(f"root={root!r} is not a <link> of robot {name!r}")
        base = root

    world = None
    if floating_base:
        world = "world"
        while world in links:
            world = "_" + world
    try:
        builder = ModelBuilder(name=name, base=world or base, gravity=gravity, strict=strict)
    except ModelError as e:
        raise URDFError(str(e)) from e

    negative = {}   # link -> principal moments of an inertia with a negative one (loaded clamped, see below)
    for ln, body in links.items():
        check_where = f"link {ln!r} <inertial>"
        if body is not None and _check_body(body, check_where, strict) is not None:
            negative[ln] = body
            body = RigidBody(body.mass, body.com, clamp_principal_moments(body.inertia))
        if ln == base and not floating_base:
            continue  # the builder made the base; a fixed base's inertia does not enter the dynamics
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", InertiaWarning)  # already reported by _check_body
                builder.add_link(ln, inertial=body)
        except ModelError as e:
            raise URDFError(f"{check_where}: {_strip_owner(str(e), ln, 'link')}") from e

    if floating_base:
        if any(j["name"] == "root_joint" for j in joints):
            raise URDFError(f"robot {name!r}: floating_base=True adds a joint 'root_joint', and the URDF has one")
        builder.add_joint("root_joint", "free_flyer", world, base)
    for j in joints:
        try:
            builder.add_joint(j["name"], j["type"], j["parent"], j["child"], origin=j["origin"], axis=j["axis"],
                              lower=j["lower"], upper=j["upper"], effort=j["effort"], velocity=j["velocity"],
                              damping=j["damping"], friction=j["friction"],
                              mimic=j["mimic"] if j["type"] != "fixed" else None,
                              **drives.get(j["name"], {}))
        except ModelError as e:
            raise URDFError(f"joint {j['name']!r}: {_strip_owner(str(e), j['name'], 'joint')}") from e

    try:
        model = builder.build()
    except ModelError as e:
        raise URDFError(f"robot {name!r}: {e}") from e
    if negative:
        model = _settle_negative_moments(model, links, negative)

    model = _with_visuals(model, robot, source)

    if mimics and mimic == "constraint":
        model = model.replace(constraints=model.constraints + _mimic_couplings(model, mimics))
    elif mimics:
        details = ", ".join(f"{jn!r} (mimics {model.mimic[jn][0]!r})" for jn in mimics)
        warnings.warn(f"robot {name!r}: mimic joints {details} are loaded as independent degrees of freedom; "
                      "their (leader, multiplier, offset) is kept in model.mimic. Pass mimic='error' to refuse them.",
                      URDFWarning, stacklevel=2)
    return model


def _mimic_couplings(model: Model, mimics) -> tuple:
    """A :class:`~screwdyn.JointCoupling` ``q_m - multiplier q_leader = offset`` per mimic joint."""
    from ..constraints import JointCoupling

    out = []
    for jn in mimics:
        leader, multiplier, offset = model.mimic[jn]
        coefficients = {jn: 1.0}
        coefficients[leader] = coefficients.get(leader, 0.0) - multiplier
        try:
            out.append(JointCoupling(model, coefficients, offset=offset, name=jn))
        except ModelError as e:
            raise URDFError(f'joint {jn!r} <mimic joint="{leader}">: {e}') from None
    return tuple(out)


def _with_visuals(model: Model, robot, source) -> Model:
    """The model with the links' ``<visual>`` geometry (:mod:`screwdyn.io.visuals`) in ``model.visuals``
    and their ``<collision>`` geometry (:mod:`screwdyn.io.collisions`) in ``model.collisions``."""
    from .collisions import read_collisions
    from .visuals import read_visuals, source_dir

    visuals = read_visuals(robot, source_dir(source), stacklevel=4)
    collisions = read_collisions(robot, source_dir(source), stacklevel=4)
    return model.replace(visuals=visuals, collisions=collisions) if visuals or collisions else model


def _read_transmissions(robot, joint_types: dict, strict=False) -> dict:
    """``{joint: {"gear_ratio": n_r, "rotor_inertia": I_m}}`` from simple ``<transmission>`` elements
    (one ``<joint>``, one ``<actuator>`` with ``<mechanicalReduction>`` and, a screwdyn extension,
    ``<rotor_inertia value="...">``). The reflected inertia ``n_r^2 I_m`` enters ``M`` (docs/theory.md §4.3);
    a transmission without a rotor inertia changes no dynamics. Others (several joints) are ignored;
    one naming a joint the robot does not have is dropped with a warning (refused when ``strict``)."""
    drives = {}
    for tr in _children(robot, "transmission"):
        where = f"transmission {tr.get('name')!r}"
        joints = [el.get("name") for el in tr if _local(el.tag) == "joint"]
        actuators = [el for el in tr if _local(el.tag) == "actuator"]
        if len(joints) != 1 or len(actuators) != 1:
            continue
        jn = joints[0]
        if jn not in joint_types:
            if strict:
                raise URDFError(f"{where}: joint {jn!r} is not a <joint> of the robot")
            warnings.warn(f"{where}: joint {jn!r} is not a <joint> of the robot; the transmission is dropped",
                          URDFWarning, stacklevel=3)
            continue
        if joint_types[jn] == "fixed":
            continue
        entry = {}
        for el in actuators[0]:
            tag = _local(el.tag)
            raw = el.text if tag == "mechanicalReduction" else el.get("value") if tag == "rotor_inertia" else None
            if raw is None and tag not in ("mechanicalReduction", "rotor_inertia"):
                continue
            try:
                value = float(raw)
            except (TypeError, ValueError):
                raise URDFError(f"{where}: <{tag}> is not a number ({raw!r})") from None
            if tag == "rotor_inertia" and not (np.isfinite(value) and value >= 0):
                raise URDFError(f"{where}: <rotor_inertia value> must be a finite number >= 0, got {raw!r}")
            if tag == "mechanicalReduction" and not (np.isfinite(value) and value != 0):
                raise URDFError(f"{where}: <mechanicalReduction> must be a finite non-zero number, got {raw!r}")
            if tag == "mechanicalReduction":
                entry["gear_ratio"] = abs(value)
            else:
                entry["rotor_inertia"] = value
        if entry:
            drives[jn] = entry
    return drives


def _strip_owner(msg: str, name: str, kind: str) -> str:
    """Drop a leading ``"joint 'x': "`` from a builder message that we prefix again."""
    prefix = f"{kind} {name!r}: "
    return msg[len(prefix):] if msg.startswith(prefix) else msg


def _check_body(body: RigidBody, where: str, strict: bool):
    """:func:`check_inertia` with messages naming the URDF element; warnings re-emitted at the caller.
    Unless ``strict``, an inertia with a negative principal moment is no error: its principal
    moments are returned (for :func:`_settle_negative_moments`)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            moments = check_inertia(body.mass, body.inertia, where, strict, indefinite=not strict)
        except ModelError as e:
            raise URDFError(str(e)) from e
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=3)  # the caller of load_urdf
    return moments


def _settle_negative_moments(model: Model, links: dict, negative: dict) -> Model:
    """The model (built with each link of ``negative`` clamped to its nearest positive semi-definite
    inertia) with each such link either left clamped, when its negative moment is round-off against
    the body it is part of (at most ``ROUNDOFF`` of that body's largest principal moment), or put
    back as written; one :class:`InertiaWarning` per link. A body's inertia is the sum of its links'
    (``inertia_com`` of a body is linear in theirs), so putting a link back adds ``R (I - I_clamped) R^T``."""
    inertia = model.inertia_com.copy()
    for ln, written in negative.items():
        k = model.frame_index(ln)
        b, R = int(model.frame_body[k]), model.frame_pose[k][:3, :3]
        parts = [(links[f] if f not in negative else RigidBody(links[f].mass, links[f].com,
                                                               clamp_principal_moments(links[f].inertia)))
                 .transformed(model.frame_pose[j])
                 for j, f in enumerate(model.frame_names) if model.frame_body[j] == b and links.get(f) is not None]
        scale = float(np.linalg.eigvalsh(compound(parts).inertia)[-1])
        moments = np.linalg.eigvalsh(written.inertia)
        carrier = (f"the body of joint {model.joint_names[b]!r}" if b >= 0 else
                   f"the fixed base {model.base_name!r}, whose inertia does not enter the dynamics")
        shown = np.array2string(moments, precision=4)
        if -moments[0] <= ROUNDOFF * scale:
            warnings.warn(f"link {ln!r} <inertial>: principal moments {shown} kg m^2; the negative one is "
                          f"round-off against {carrier} (largest principal moment {scale:.4g} kg m^2): clamped to 0. "
                          "Pass strict=True to refuse it.", InertiaWarning, stacklevel=3)
            continue
        warnings.warn(f"link {ln!r} <inertial>: inertia is not positive semi-definite (principal moments {shown} "
                      f"kg m^2, beyond round-off against {carrier}): kept as written; what needs a positive-definite "
                      "mass matrix (forward_dynamics, mass_matrix_inverse) raises ModelError where it is not. "
                      "Pass strict=True to refuse it.", InertiaWarning, stacklevel=3)
        if b >= 0:
            inertia[b] += R @ (written.inertia - clamp_principal_moments(written.inertia)) @ R.T
    return model.replace(inertia_com=inertia) if not np.array_equal(inertia, model.inertia_com) else model


def _drop_unknown_leaders(joints: list, strict: bool):
    """Drop (with a warning) each ``<mimic>`` whose leader is no moving joint of the robot, or
    refuse it when ``strict``; a mimic on a fixed joint is ignored anyway."""
    moving = {j["name"] for j in joints if j["type"] != "fixed"}
    for j in joints:
        if j["mimic"] is None or j["type"] == "fixed" or j["mimic"][0] in moving:
            continue
        msg = f"joint {j['name']!r} mimics {j['mimic'][0]!r}, which is not a moving joint of the robot"
        if strict:
            raise URDFError(msg)
        warnings.warn(f'joint {j["name"]!r} <mimic joint="{j["mimic"][0]}">: no moving joint {j["mimic"][0]!r} in the '
                      "robot; the mimic is dropped (the joint is an independent degree of freedom)",
                      URDFWarning, stacklevel=3)
        j["mimic"] = None


def _read_links(robot) -> dict:
    """``{link name: RigidBody or None}`` in declaration order."""
    links = {}
    for k, el in enumerate(_children(robot, "link")):
        ln = el.get("name")
        if ln is None or not ln.strip():
            raise URDFError(f"<link> number {k + 1} has no name attribute")
        if ln in links:
            raise URDFError(f"link {ln!r} is defined twice")
        owner = f"link {ln!r}"
        inertial = _one(el, "inertial", owner)
        links[ln] = None if inertial is None else _read_inertial(inertial, f"{owner} <inertial>")
    return links


def _read_inertial(el, owner: str) -> RigidBody:
    T = _origin(el, owner)
    mass_el = _one(el, "mass", owner, required=True)
    if mass_el.get("value") is None:
        raise URDFError(f"{owner} <mass>: missing required attribute 'value'")
    mass = _attr_number(mass_el, "value", None, owner)
    inertia_el = _one(el, "inertia", owner, required=True)
    v = {key: _attr_number(inertia_el, key, None, owner) for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    I = np.array([[v["ixx"], v["ixy"], v["ixz"]],
                  [v["ixy"], v["iyy"], v["iyz"]],
                  [v["ixz"], v["iyz"], v["izz"]]])
    R = T[:3, :3]
    return RigidBody(mass, T[:3, 3], R @ I @ R.T)


def _read_joints(robot) -> list:
    joints = []
    seen = set()
    for k, el in enumerate(_children(robot, "joint")):
        jn = el.get("name")
        if jn is None or not jn.strip():
            raise URDFError(f"<joint> number {k + 1} has no name attribute")
        if jn in seen:
            raise URDFError(f"joint {jn!r} is defined twice")
        seen.add(jn)
        owner = f"joint {jn!r}"
        jtype = el.get("type")
        if jtype is None:
            raise URDFError(f"{owner}: missing required attribute 'type'")
        if jtype == "planar":
            raise URDFError(f"{owner}: planar joints are not supported (model the plane's x, y and rotation as "
                            "two prismatic joints and a revolute joint through massless links)")
        if jtype not in _SUPPORTED:
            raise URDFError(f"{owner}: unknown joint type {jtype!r} (supported: {', '.join(_SUPPORTED)})")
        ends = {}
        for role in ("parent", "child"):
            e = _one(el, role, owner, required=True)
            link = e.get("link")
            if link is None or not link.strip():
                raise URDFError(f"{owner} <{role}>: missing required attribute 'link'")
            ends[role] = link
        origin = _origin(el, owner)
        axis = np.array([1.0, 0.0, 0.0])
        lower, upper, effort, velocity = -np.inf, np.inf, np.inf, np.inf
        if jtype != "fixed":
            axis_el = _one(el, "axis", owner)
            if axis_el is not None:
                axis = _attr_numbers(axis_el, "xyz", 3, (1.0, 0.0, 0.0), owner)
                if np.linalg.norm(axis) < 1e-12:
                    raise URDFError(f"{_where(owner, 'axis', 'xyz', axis_el.get('xyz'))}: the joint axis is zero")
            limit = _one(el, "limit", owner)
            if limit is not None:
                if jtype != "continuous":
                    lower = _attr_number(limit, "lower", -np.inf, owner, allow_inf=True)
                    upper = _attr_number(limit, "upper", np.inf, owner, allow_inf=True)
                effort = _attr_number(limit, "effort", np.inf, owner, allow_inf=True)
                velocity = _attr_number(limit, "velocity", np.inf, owner, allow_inf=True)
        damping, friction = 0.0, 0.0
        dyn = _one(el, "dynamics", owner)
        if dyn is not None:
            damping = _attr_number(dyn, "damping", 0.0, owner)
            friction = _attr_number(dyn, "friction", 0.0, owner)
        mimic_spec = None
        mim = _one(el, "mimic", owner)
        if mim is not None:
            leader = mim.get("joint")
            if leader is None or not leader.strip():
                raise URDFError(f"{owner} <mimic>: missing required attribute 'joint'")
            if leader == jn:
                raise URDFError(f'{owner} <mimic joint="{leader}">: a joint cannot mimic itself')
            mimic_spec = (leader, _attr_number(mim, "multiplier", 1.0, owner), _attr_number(mim, "offset", 0.0, owner))
        joints.append(dict(name=jn, type=jtype, parent=ends["parent"], child=ends["child"], origin=origin,
                           axis=axis, lower=lower, upper=upper, effort=effort, velocity=velocity,
                           damping=damping, friction=friction, mimic=mimic_spec))
    return joints


# ---------------------------------------------------------------------------- example-robot-data
#: Robot name -> URDF path relative to example-robot-data's ``robots`` directory.
EXAMPLE_ROBOTS = {
    "panda": "panda_description/urdf/panda.urdf",
    "panda_collision": "panda_description/urdf/panda_collision.urdf",
    "ur3": "ur_description/urdf/ur3_robot.urdf",
    "ur3_gripper": "ur_description/urdf/ur3_gripper.urdf",
    "ur3_limited": "ur_description/urdf/ur3_joint_limited_robot.urdf",
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "ur5_gripper": "ur_description/urdf/ur5_gripper.urdf",
    "ur5_limited": "ur_description/urdf/ur5_joint_limited_robot.urdf",
    "ur10": "ur_description/urdf/ur10_robot.urdf",
    "ur10_limited": "ur_description/urdf/ur10_joint_limited_robot.urdf",
    "talos_full_v2": "talos_data/robots/talos_full_v2.urdf",
    "talos_full_v2_box": "talos_data/robots/talos_full_v2_box.urdf",
    "talos_reduced": "talos_data/robots/talos_reduced.urdf",
    "talos_reduced_box": "talos_data/robots/talos_reduced_box.urdf",
    "talos_left_arm": "talos_data/robots/talos_left_arm.urdf",
    "baxter": "baxter_description/urdf/baxter.urdf",
    "kinova": "kinova_description/robots/kinova.urdf",
    "double_pendulum": "double_pendulum_description/urdf/double_pendulum.urdf",
    "double_pendulum_continuous": "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
    "double_pendulum_simple": "double_pendulum_description/urdf/double_pendulum_simple.urdf",
    "asr_twodof": "asr_twodof_description/urdf/TwoDofs.urdf",
    "z1": "z1_description/urdf/z1.urdf",
    "tiago": "tiago_description/robots/tiago.urdf",
    "tiago_dual": "tiago_description/robots/tiago_dual.urdf",
    "tiago_no_hand": "tiago_description/robots/tiago_no_hand.urdf",
    "tiago_pro": "tiago_pro_description/robots/tiago_pro.urdf",
    "pr2": "pr2_description/urdf/pr2.urdf",
    "xarm7": "xarm_description/urdf/xarm7.urdf",
    "so100": "so_arm_description/urdf/so100.urdf",
    "so101": "so_arm_description/urdf/so101.urdf",
    "finger_edu": "finger_edu_description/robots/finger_edu.urdf",
    "allegro_left_hand": "allegro_hand_description/urdf/allegro_left_hand.urdf",
    "allegro_right_hand": "allegro_hand_description/urdf/allegro_right_hand.urdf",
    "romeo": "romeo_description/urdf/romeo.urdf",
    "icub": "icub_description/robots/icub.urdf",
    "icub_reduced": "icub_description/robots/icub_reduced.urdf",
    "simple_humanoid": "simple_humanoid_description/urdf/simple_humanoid.urdf",
    "a1": "a1_description/urdf/a1.urdf",
    "go1": "go1_description/urdf/go1.urdf",
    "go2": "go2_description/urdf/go2.urdf",
    "b1": "b1_description/urdf/b1.urdf",
    "b1_z1": "b1_description/urdf/b1-z1.urdf",
    "solo": "solo_description/robots/solo.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
    "bolt": "bolt_description/robots/bolt.urdf",
    "anymal": "anymal_b_simple_description/robots/anymal.urdf",
    "anymal_kinova": "anymal_b_simple_description/robots/anymal-kinova.urdf",
    "anymal_c": "anymal_c_simple_description/urdf/anymal.urdf",
    "hyq": "hyq_description/robots/hyq_no_sensors.urdf",
    "g1": "g1_description/urdf/g1_29dof_rev_1_0.urdf",
    "centauro": "centauro_description/urdf/centauro.urdf",
}

_ROBOTS_SUBDIR = ("cmeel.prefix", "share", "example-robot-data", "robots")
_INSTALL_HINT = "install it with `pip install example-robot-data`"


def _example_robot_data_dir() -> Path | None:
    """The ``robots`` directory of the installed example-robot-data package, or None."""
    marker = "share/example-robot-data/robots/"
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        for f in dist.files or ():
            s = str(f).replace("\\", "/")
            k = s.find(marker)
            if k >= 0:
                d = Path(str(dist.locate_file(s[:k + len(marker)])))
                if d.is_dir():
                    return d
    for entry in sys.path:
        if not entry:
            continue
        d = Path(entry).joinpath(*_ROBOTS_SUBDIR)
        if d.is_dir():
            return d
    return None


def example_robot_data_path(name: str) -> Path:
    """The path of a model file (URDF, SDF) shipped by the ``example-robot-data`` package.

    ``name`` is a key of :data:`EXAMPLE_ROBOTS` (``"panda"``, ``"ur5"``, ``"talos_full_v2"``,
    ...) or a path relative to the package's ``robots`` directory
    (``"ur_description/urdf/ur3.urdf"``, ``"cassie_description/robots/cassie_v2.sdf"``). Raises :class:`FileNotFoundError` when the package
    or the file is absent, :class:`KeyError` for an unknown name.
    """
    rel = EXAMPLE_ROBOTS.get(name)
    if rel is None and not name.endswith((".urdf", ".sdf")):
        raise KeyError(f"unknown example-robot-data robot {name!r}; known: {sorted(EXAMPLE_ROBOTS)} "
                       "(or pass a path relative to the robots directory ending in .urdf or .sdf)")
    robots = _example_robot_data_dir()
    if robots is None:
        raise FileNotFoundError(f"the example-robot-data package is not installed; {_INSTALL_HINT}")
    path = robots / (rel if rel is not None else name)
    if not path.is_file():
        raise FileNotFoundError(f"example-robot-data has no {path.relative_to(robots)} in {robots} "
                                f"(an older or newer version?); {_INSTALL_HINT}")
    return path
