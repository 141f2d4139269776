"""SDFormat loader: the rigid-body tree of a Gazebo or Drake model, and its closed loops.

The document is read with :mod:`defusedxml` (as :func:`screwdyn.load_urdf` reads URDF): no
maintained pure-Python SDFormat parser exists (``sdformat`` on PyPI is an unrelated 2019
microscopy format; ``python-sdformat`` 0.4 dates from 2022 and needs ``numpy < 2``; the
``libsdformat`` bindings are not on PyPI in a usable form), so the SDFormat rules used are written
here, from the specification (``sdformat.org``, versions 1.4 to 1.11).

One ``<model>`` (the ``<sdf>`` element's, or the one named ``model=`` of a ``<world>``) is read:
its ``<link>`` (``<inertial>``, ``<visual>``, ``<collision>``), ``<joint>``, ``<frame>`` and
``<pose>``. Nested models and ``<include>`` are refused.

Frames and poses
----------------
Every pose is resolved in the model frame ``__model__``:

* SDFormat 1.7 and later: ``<pose relative_to="F">`` is the pose in frame ``F`` (a link, joint or
  ``<frame>``); without ``relative_to`` a link's pose is in the model frame, a joint's in its child
  link's frame, a ``<frame>``'s in the frame it is ``attached_to`` (default ``__model__``).
  ``<axis><xyz expressed_in="F">`` gives the axis in ``F`` (default: the joint frame).
* SDFormat 1.6 and earlier: a link's pose is in the model frame, a joint's in its child link
  frame; ``<use_parent_model_frame>1`` writes the axis in the model frame. ``<pose frame="">`` is
  accepted; a non-empty ``frame`` attribute (never given meaning) is refused.
* ``rotation_format="quat_xyzw"`` and ``degrees="true"`` (SDFormat 1.9) are honoured; Euler
  angles are roll-pitch-yaw, ``R = Rz(yaw) Ry(pitch) Rx(roll)``, as in URDF.

The base frame is the root link's frame (as Pinocchio's SDF parser places it; gravity is
``gravity`` in that frame) or, when a joint has the parent ``world``, the world frame. ``q = 0``
is the pose the file writes: each joint's body frame is its joint frame, a link off its joint
frame is a frame fixed to it, and every link, ``<frame>`` and loop joint is a frame of the model.

Joints (SDFormat -> screwdyn)
-----------------------------
``revolute``, ``continuous`` -> revolute; ``prismatic`` -> prismatic; ``ball`` -> spherical;
``fixed`` -> merged (as a fixed URDF joint); ``universal`` and ``revolute2`` -> two revolute joints
about ``axis`` then ``axis2`` (the second named ``"<joint>:axis2"``, through a massless link);
``screw`` -> refused. ``<limit>``: ``lower``/``upper`` (``|x| >= 1e16``, the specification's
default, means none), ``effort``/``velocity`` (negative: none); ``<dynamics>``: ``damping``,
``friction``. A joint spring (``spring_stiffness``) is dropped with an :class:`SDFWarning`
(``strict=True`` refuses it). A link without ``<inertial>`` has SDFormat's default inertia (mass 1
kg, unit moments), as every SDFormat reader gives it.

Closed chains
-------------
A link that is the child of several joints closes a kinematic loop. As Pinocchio does, the tree
keeps the first of its parent joints in document order (or the one named in
``parent_guidance``); each other one becomes a constraint in ``model.constraints``:

=============================  ============================================================
loop joint                     constraint
=============================  ============================================================
``ball``                       :class:`~screwdyn.PointLoop` between the frames
                               ``"<joint>:parent"`` and ``"<joint>"`` (the joint frame on the
                               parent and on the child link; 3 rows)
``fixed``                      :class:`~screwdyn.FrameLoop` between the same frames (6 rows)
``revolute``, ``prismatic``,   the child link is split, as Pinocchio's parser does: the joint
``continuous``, ``universal``  keeps its degree(s) of freedom and moves a copy
                               ``"<child>_<joint>"`` of the child link, its mass and inertia
                               shared equally between the copies, welded to the child link by a
                               :class:`~screwdyn.FrameLoop` at the link frame (6 rows)
``gearbox``                    :class:`~screwdyn.JointCoupling`
                               ``theta_2 = -gearbox_ratio theta_1`` (the specification's
                               rule), where ``theta_1``, ``theta_2`` are the coordinates of the
                               one-axis joints joining the parent and the child link to the
                               ``gearbox_reference_body`` (refused otherwise)
=============================  ============================================================

A ``gearbox`` joint is never a tree joint. Every loop is closed at ``q = 0``: a joint has one
pose, which places its frame on both links at the file's pose.

Not modelled
------------
``<plugin>`` (a controller), a joint's spring, ``<static>`` models (refused), sensors, surface
and contact parameters (ignored). What the model leaves out gives one :class:`SDFWarning`
(``strict=True`` refuses it).
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

from ..errors import SDFError, SDFWarning, URDFError
from ..inertia import RigidBody
from ..model import Model, ModelBuilder
from ..spatial import inverse_transform, rotation_from_rpy, transform
from .urdf import _local, _parse_numbers, _parse_xml

__all__ = ["SDFWarning", "load_sdf"]

_ONE_AXIS = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic"}
_TREE_TYPES = ("revolute", "continuous", "prismatic", "ball", "fixed", "universal", "revolute2")
_NO_LIMIT = 1e16   # the specification's default limits are -1e16 and 1e16: no limit


# ---------------------------------------------------------------------------- reading values
def _kids(el, tag):
    return [c for c in el if _local(c.tag) == tag]


def _kid(el, tag):
    found = _kids(el, tag)
    return found[0] if found else None


def _numbers(text, count, where):
    try:
        return _parse_numbers(text or "", count, where, allow_inf=False)
    except URDFError as e:
        raise SDFError(str(e)) from None


def _value(el, tag, default, where):
    """The number in child ``<tag>`` of ``el`` (``default`` when absent)."""
    c = None if el is None else _kid(el, tag)
    if c is None:
        return default
    return float(_numbers(c.text, 1, f"{where} <{tag}>")[0])


def _text(el, tag, where, required=True):
    c = _kid(el, tag)
    text = None if c is None else (c.text or "").strip()
    if required and not text:
        raise SDFError(f"{where}: missing <{tag}>")
    return text


def _quat_matrix(x, y, z, w):
    n = np.sqrt(x * x + y * y + z * z + w * w)
    if n < 1e-12:
        raise ValueError("zero quaternion")
    x, y, z, w = x / n, y / n, z / n, w / n
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _pose(el, where, legacy):
    """``(relative_to or None, T)`` of the ``<pose>`` child of ``el`` (identity when absent)."""
    p = _kid(el, "pose")
    if p is None:
        return None, np.eye(4)
    where = f"{where} <pose>"
    if legacy and (p.get("frame") or "").strip():
        raise SDFError(f"{where}: the frame attribute {p.get('frame')!r} (SDFormat 1.5/1.6) has no defined "
                       "meaning; write the file in SDFormat 1.7 with relative_to")
    fmt = p.get("rotation_format", "euler_rpy")
    text = (p.text or "").strip()
    if fmt == "quat_xyzw":
        v = _numbers(text, 7, where) if text else np.array([0, 0, 0, 0, 0, 0, 1.0])
        try:
            R = _quat_matrix(*v[3:])
        except ValueError:
            raise SDFError(f"{where}: the quaternion is zero") from None
    elif fmt == "euler_rpy":
        v = _numbers(text, 6, where) if text else np.zeros(6)
        rpy = np.radians(v[3:]) if p.get("degrees", "false").strip().lower() in ("true", "1") else v[3:]
        R = rotation_from_rpy(rpy)
    else:
        raise SDFError(f"{where}: rotation_format {fmt!r} is not 'euler_rpy' or 'quat_xyzw'")
    rel = (p.get("relative_to") or "").strip() or None
    return rel, transform(R, v[:3])


# ---------------------------------------------------------------------------- frames
class _Frames:
    """The frames of a model and their poses in the model frame ``__model__`` (``M``)."""

    def __init__(self, label):
        self.label = label
        self.rel = {}      # name -> (relative_to or None for M, T_rel_name, what)
        self.attached = {}  # name -> the frame it is attached to (a link is attached to itself)
        self.memo = {"__model__": np.eye(4)}

    def add(self, name, relative_to, T, attached_to, what):
        if name in self.rel or name == "__model__":
            raise SDFError(f"{self.label}: {what}: the name {name!r} is taken by another link, joint or frame")
        self.rel[name] = (relative_to, T, what)
        self.attached[name] = attached_to

    def pose(self, name, chain=()):
        """``T_M_name``."""
        if name in self.memo:
            return self.memo[name]
        if name not in self.rel:
            raise SDFError(f"{self.label}: {chain[-1] if chain else 'a pose'}: no frame {name!r} in the model")
        if name in chain:
            raise SDFError(f"{self.label}: the poses of {list(chain)} are relative to each other in a cycle")
        rel, T, what = self.rel[name]
        if rel is not None and rel not in self.rel and rel != "__model__":
            raise SDFError(f"{self.label}: {what}: relative_to={rel!r} names no link, joint or frame of the model")
        T = T if rel is None else self.pose(rel, chain + (name,)) @ T
        self.memo[name] = T
        return T

    def link(self, name, chain=()):
        """The link that frame ``name`` is rigidly attached to."""
        target = self.attached.get(name)
        if target is None:
            raise SDFError(f"{self.label}: no link, joint or frame {name!r} in the model")
        if target == name:
            return name
        if name in chain:
            raise SDFError(f"{self.label}: frames {list(chain)} are attached to each other in a cycle")
        return self.link(target, chain + (name,))


# ---------------------------------------------------------------------------- the document
def _read_source(source):
    if isinstance(source, bytes):
        return source, "SDF string", None
    if isinstance(source, str) and source.strip().startswith("<"):
        return source, "SDF string", None
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"load_sdf: source must be a path or an XML string, got {type(source).__name__}")
    if isinstance(source, str) and not source.strip():
        raise SDFError("empty SDF document (got a blank string, expected a path or XML text)")
    path = Path(source)
    if not path.is_file():
        raise SDFError(f"SDF file {str(path)!r} " + ("is a directory" if path.is_dir() else "does not exist"))
    return path.read_bytes(), f"SDF file {str(path)!r}", path.resolve().parent


def _find_model(root, label, name):
    if _local(root.tag) != "sdf":
        raise SDFError(f"{label}: the root element is <{_local(root.tag)}>, expected <sdf>")
    version = tuple(int(x) for x in (root.get("version") or "1.11").split(".")[:2] if x.isdigit()) or (1, 11)
    models = _kids(root, "model")
    for world in _kids(root, "world"):
        models += _kids(world, "model")
    if name is not None:
        models = [m for m in models if m.get("name") == name]
        if not models:
            raise SDFError(f"{label}: no <model name={name!r}>")
    if len(models) != 1:
        raise SDFError(f"{label}: {len(models)} <model> elements; name the one to load with model=")
    m = models[0]
    for tag in ("model", "include"):
        if _kids(m, tag):
            raise SDFError(f"{label}: model {m.get('name')!r} nests a <{tag}>; nested models are not supported")
    return m, version


def _inertial(link_el, where):
    """The link's :class:`RigidBody` in its own frame (SDFormat's default when absent)."""
    el = _kid(link_el, "inertial")
    if el is None:
        return RigidBody(1.0, np.zeros(3), np.eye(3))
    where = f"{where} <inertial>"
    _, T = _pose(el, where, legacy=True)   # always in the link frame
    mass = _value(el, "mass", 1.0, where)
    I_el = _kid(el, "inertia")
    v = {k: _value(I_el, k, 1.0 if k in ("ixx", "iyy", "izz") else 0.0, f"{where} <inertia>")
         for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    I = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]])
    R = T[:3, :3]
    return RigidBody(mass, T[:3, 3], R @ I @ R.T)


def _joint_terms(j_el, axis_tag, where):
    """``ModelBuilder.add_joint`` keywords of ``<axis>`` (or ``<axis2>``): limits and dynamics;
    and the spring stiffness (dropped by the caller)."""
    axis = _kid(j_el, axis_tag)
    lim = None if axis is None else _kid(axis, "limit")
    dyn = None if axis is None else _kid(axis, "dynamics")
    lower = _value(lim, "lower", -np.inf, where)
    upper = _value(lim, "upper", np.inf, where)
    effort = _value(lim, "effort", -1.0, where)
    velocity = _value(lim, "velocity", -1.0, where)
    terms = dict(lower=-np.inf if lower <= -_NO_LIMIT else lower, upper=np.inf if upper >= _NO_LIMIT else upper,
                 effort=np.inf if effort < 0 else effort, velocity=np.inf if velocity < 0 else velocity,
                 damping=_value(dyn, "damping", 0.0, where), friction=_value(dyn, "friction", 0.0, where))
    if j_el.get("type") == "continuous":
        terms.update(lower=-np.inf, upper=np.inf)
    return terms, _value(dyn, "spring_stiffness", 0.0, where)


def _unique(name, taken):
    while name in taken:
        name += "_"
    taken.add(name)
    return name


# ---------------------------------------------------------------------------- the loader
def load_sdf(source, *, gravity=(0.0, 0.0, -9.81), strict=False, root=None, floating_base=False,
             parent_guidance=(), model=None) -> Model:
    """Load a robot from an SDFormat file path or XML string, with its closed loops.

    Parameters
    ----------
    source:
        A path (``str`` or :class:`pathlib.Path`) or the SDFormat text (a string whose stripped
        start is ``<``).
    gravity:
        Gravity in the base frame [m/s^2] (the root link's frame, or the world's).
    strict:
        Refuse what is otherwise loaded with an :class:`SDFWarning` (plugins, joint springs).
    root:
        The base link; by default the unique link that is no joint's child.
    floating_base:
        ``True``: the root link floats, joined to a new base ``"world"`` by a free-flyer
        ``"root_joint"`` (as :func:`screwdyn.load_urdf`); ``q`` starts with its position and
        quaternion ``(x, y, z, qx, qy, qz, qw)``.
    parent_guidance:
        Names of joints to keep in the tree where a link has several parent joints (Pinocchio's
        ``parent_guidance``); by default the first in document order.
    model:
        The name of the ``<model>`` to load when the document holds several (in ``<world>``\\ s).

    The semantics (poses and frames, the joint types, the loops and the constraints they become
    on ``model.constraints``) are those of :mod:`screwdyn.io.sdf`. ``<visual>`` geometry goes to
    ``model.visuals`` (meshes found as :func:`screwdyn.load_urdf` finds them, ``model://`` as
    ``package://``); ``<collision>`` geometry is read by the same function
    (:func:`screwdyn.io.sdf_geometry.sdf_geometry` with ``"collision"``) but not kept: the model
    has no collision geometry yet.

    >>> model = load_sdf('''<sdf version="1.7"><model name="pendulum">
    ...   <link name="base"/>
    ...   <link name="arm"><pose relative_to="hinge">0 0 -0.5 0 0 0</pose>
    ...     <inertial><mass>2</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.01</izz></inertia></inertial>
    ...   </link>
    ...   <joint name="hinge" type="revolute"><pose relative_to="base">0 0 1 0 0 0</pose>
    ...     <parent>base</parent><child>arm</child><axis><xyz>0 1 0</xyz></axis></joint>
    ... </model></sdf>''')
    >>> model, model.T_parent_body[0][:3, 3], model.com[0]
    (Model('pendulum', n=1, joints=R, mass=2 kg), array([0., 0., 1.]), array([ 0. ,  0. , -0.5]))

    Raises :class:`~screwdyn.errors.SDFError` (a :class:`ValueError`) on a malformed, hostile or
    unsupported document, naming the element at fault.
    """
    data, label, base_dir = _read_source(source)
    m_el, version = _find_model(_parse_xml(data, label, SDFError, "SDFormat"), label, model)
    legacy = version < (1, 7)
    name = m_el.get("name") or "sdf"
    if (_text(m_el, "static", "", required=False) or "").lower() in ("1", "true"):
        raise SDFError(f"{label}: model {name!r} is <static>: it has no dynamics")
    drop = [f"plugin {p.get('name')!r} ({p.get('filename')})" for p in _kids(m_el, "plugin")]

    frames = _Frames(label)
    links = {}
    for k, el in enumerate(_kids(m_el, "link")):
        ln = (el.get("name") or "").strip()
        if not ln:
            raise SDFError(f"{label}: <link> number {k + 1} has no name")
        rel, T = _pose(el, f"link {ln!r}", legacy)
        frames.add(ln, None if legacy else rel, T, ln, f"link {ln!r}")
        links[ln] = el
    if not links:
        raise SDFError(f"{label}: model {name!r} has no <link>")
    frames.attached["__model__"] = (m_el.get("canonical_link") or "").strip() or next(iter(links))
    _, T_world_M = _pose(m_el, f"model {name!r}", legacy)
    frames.memo["world"] = inverse_transform(T_world_M)

    for k, el in enumerate(_kids(m_el, "frame")):
        fn = (el.get("name") or "").strip()
        if not fn:
            raise SDFError(f"{label}: <frame> number {k + 1} has no name")
        attached = (el.get("attached_to") or "").strip() or "__model__"
        rel, T = _pose(el, f"frame {fn!r}", False)
        frames.add(fn, rel or (None if attached == "__model__" else attached), T, attached, f"frame {fn!r}")
    joints = _read_joints(m_el, frames, legacy, label)
    for frame in list(frames.rel):   # every pose resolves (no unknown names, no cycles)
        frames.pose(frame)
    for j in joints:
        j["parent_link"] = "world" if j["parent"] == "world" else frames.link(j["parent"])
        j["child_link"] = frames.link(j["child"])
        if j["parent_link"] == j["child_link"]:
            raise SDFError(f"{label}: joint {j['name']!r} joins link {j['child_link']!r} to itself")

    tree, loops = _spanning_tree(joints, links, parent_guidance, label)
    base, T_B_M = _base(tree, links, frames, root, floating_base, label)

    def X(frame):   # pose of a frame in the base frame at q = 0 (the file's pose)
        return T_B_M @ frames.pose(frame)

    taken_links, taken_joints = set(links) | {base}, {j["name"] for j in joints}
    builder = ModelBuilder(name=name, base=base, gravity=gravity, strict=strict)
    shares = {ln: 1 + sum(1 for j in loops if j["child_link"] == ln and j["type"] not in ("ball", "fixed", "gearbox"))
              for ln in links}
    for ln, el in links.items():
        if ln != base:
            b = _inertial(el, f"link {ln!r}")
            s = shares[ln]
            builder.add_link(ln, inertial=RigidBody(b.mass / s, b.com, b.inertia / s))
    if floating_base:
        builder.add_joint("root_joint", "free_flyer", base, next(j for j in links if j not in tree))
    springs = []
    specs = []   # the constraints, made once the model is built
    for j in joints:
        P, C = j["parent_link"], j["child_link"]
        T_P_J, T_J_C = inverse_transform(X(P)) @ X(j["key"]), inverse_transform(X(j["key"])) @ X(C)
        if j["type"] != "fixed" and j["spring"] != 0:
            springs.append(j["name"])
        if tree.get(C) is j:
            _attach(builder, j, P, C, T_P_J, T_J_C, taken_links, taken_joints)
        elif j["type"] in ("ball", "fixed"):
            fa, fb = _unique(f"{j['name']}:parent", taken_links), _unique(j["name"], taken_links)
            builder.add_frame(fa, P, T_P_J)
            builder.add_frame(fb, C, inverse_transform(T_J_C))
            specs.append(("point" if j["type"] == "ball" else "frame", j["name"], fa, fb))
        elif j["type"] == "gearbox":
            specs.append(("coupling", j["name"]) + _gearbox(j, tree, frames, label))
        else:   # split the child link, as Pinocchio does
            copy = _unique(f"{C}_{j['name']}", taken_links)
            b = _inertial(links[C], f"link {C!r}")
            builder.add_link(copy, inertial=RigidBody(b.mass / shares[C], b.com, b.inertia / shares[C]))
            _attach(builder, j, P, copy, T_P_J, T_J_C, taken_links, taken_joints)
            specs.append(("frame", j["name"], C, copy))
    if springs:
        drop.append(f"the springs (spring_stiffness) of joints {springs}")
    if drop and strict:
        raise SDFError(f"{label}: strict=True refuses what the screwdyn model would leave out: " + "; ".join(drop))
    if drop:
        warnings.warn(f"{label}: not modelled: " + "; ".join(drop), SDFWarning, stacklevel=2)
    for el in _kids(m_el, "frame"):
        fn = el.get("name").strip()
        builder.add_frame(_unique(fn, taken_links), frames.link(fn), inverse_transform(X(frames.link(fn))) @ X(fn))
    try:
        built = builder.build()
    except Exception as e:
        if isinstance(e, SDFError) or not isinstance(e, ValueError):
            raise
        raise SDFError(f"{label}: {e}") from None
    from .sdf_geometry import sdf_geometry

    changes = {"visuals": sdf_geometry(links, "visual", legacy, frames, base_dir, label)}
    if specs:
        changes["constraints"] = _constraints(built, specs)
    return built.replace(**changes)


def _read_joints(m_el, frames, legacy, label):
    joints = []
    for k, el in enumerate(_kids(m_el, "joint")):
        jn = (el.get("name") or "").strip()
        if not jn:
            raise SDFError(f"{label}: <joint> number {k + 1} has no name")
        where = f"{label}: joint {jn!r}"
        jtype = (el.get("type") or "").strip()
        if jtype == "screw":
            raise SDFError(f"{where}: screw joints are not supported")
        if jtype not in _TREE_TYPES + ("gearbox",):
            raise SDFError(f"{where}: unknown joint type {jtype!r} (supported: {', '.join(_TREE_TYPES)}, gearbox)")
        parent, child = _text(el, "parent", where), _text(el, "child", where)
        if child == "world":
            raise SDFError(f"{where}: the child cannot be 'world'")
        rel, T = _pose(el, f"joint {jn!r}", legacy)
        key = jn
        if legacy and (jn in frames.rel or jn == "__model__"):   # SDFormat < 1.7 lets a joint share a link's name
            key = jn + "\0joint"
        frames.add(key, (None if legacy else rel) or child, T, child, f"joint {jn!r}")
        terms, spring = _joint_terms(el, "axis", where)
        joints.append(dict(name=jn, type=jtype, el=el, key=key, parent=parent, child=child, terms=terms, spring=spring,
                           axes=[_axis(el, tag, key, frames, legacy, where) for tag in ("axis", "axis2")]))
    for j in joints:   # the joint's axes in its own frame (its pose may be relative to frames read later)
        j["axes"] = [ax() for ax in j["axes"]]
    return joints


def _axis(el, tag, key, frames, legacy, where):
    """A function giving the unit axis of ``<tag>`` (``axis`` or ``axis2``) in the joint frame."""
    a_el = _kid(el, tag)
    xyz = None if a_el is None else _kid(a_el, "xyz")
    v = np.array([0.0, 0.0, 1.0]) if xyz is None else _numbers(xyz.text, 3, f"{where} <{tag}><xyz>")
    if np.linalg.norm(v) < 1e-12:
        raise SDFError(f"{where} <{tag}><xyz>: the axis is zero")
    if legacy:
        in_model = a_el is not None and (_text(a_el, "use_parent_model_frame", "", required=False) or "0").lower() in ("1", "true")
        frame = "__model__" if in_model else key
    else:
        frame = (xyz.get("expressed_in") or "").strip() if xyz is not None else ""
        frame = frame or key
    return lambda: frames.pose(key)[:3, :3].T @ frames.pose(frame)[:3, :3] @ (v / np.linalg.norm(v))


def _spanning_tree(joints, links, guidance, label):
    """``({link: its tree joint}, [loop joints])``: Pinocchio's rule (the first parent joint in
    document order, or the one in ``guidance``); gearbox joints are always loops."""
    names = {j["name"] for j in joints}
    unknown = [g for g in guidance if g not in names]
    if unknown:
        raise SDFError(f"{label}: parent_guidance names joints {unknown} that the model does not have")
    parents = {ln: [] for ln in links}
    for j in joints:
        if j["type"] != "gearbox":
            parents[j["child_link"]].append(j)
    tree = {}
    for ln, js in parents.items():
        if js:
            tree[ln] = next((j for j in js if j["name"] in guidance), js[0])
    chosen = {id(j) for j in tree.values()}
    return tree, [j for j in joints if id(j) not in chosen]


def _base(tree, links, frames, root, floating_base, label):
    """``(base name, T_base_model)``: the world when a joint has the parent ``world``, else the root link."""
    if any(j["parent_link"] == "world" for j in tree.values()):
        if "world" in links:
            raise SDFError(f"{label}: a link is named 'world', which SDFormat reserves for the world frame")
        if floating_base or root is not None:
            raise SDFError(f"{label}: the model is joined to the world; floating_base and root do not apply")
        return "world", inverse_transform(frames.pose("world"))
    roots = [ln for ln in links if ln not in tree]
    if root is not None:
        if root not in links:
            raise SDFError(f"{label}: root={root!r} is not a <link> of the model")
        if root in tree:
            raise SDFError(f"{label}: root={root!r} is the child of joint {tree[root]['name']!r}")
        roots = [root] + [r for r in roots if r != root]
    if len(roots) != 1 and root is None:
        raise SDFError(f"{label}: " + ("no link is free of a parent joint: the joints form a loop" if not roots else
                                       f"links {roots} have no parent joint; name the base with root="))
    T_B_M = inverse_transform(frames.pose(roots[0]))
    if floating_base:
        if "world" in links:
            raise SDFError(f"{label}: floating_base=True adds a base 'world', and a link has that name")
        return "world", T_B_M
    return roots[0], T_B_M


def _attach(builder, j, parent, child, T_P_J, T_J_C, taken_links, taken_joints):
    """Add tree joint ``j`` from link ``parent`` to link ``child``: its body frame is the joint
    frame (``T_P_J`` in the parent at q = 0); the child link is fixed to it at ``T_J_C``."""
    jn, jtype = j["name"], j["type"]
    if jtype == "fixed":
        builder.add_joint(jn, "fixed", parent, child, origin=T_P_J @ T_J_C)
        return
    if jtype == "ball":
        steps = [(jn, "spherical", None, {})]
    elif jtype in ("universal", "revolute2"):
        second, _ = _joint_terms(j["el"], "axis2", f"joint {jn!r}")
        steps = [(jn, "revolute", j["axes"][0], j["terms"]),
                 (_unique(f"{jn}:axis2", taken_joints), "revolute", j["axes"][1], second)]
    else:
        steps = [(jn, _ONE_AXIS[jtype], j["axes"][0], j["terms"])]
    at_joint = np.allclose(T_J_C, np.eye(4), rtol=0.0, atol=1e-12)
    prev, origin = parent, T_P_J
    for k, (name, kind, axis, terms) in enumerate(steps):
        last = k == len(steps) - 1
        link = child if last and at_joint else _unique(jn if last else f"{jn}:axis1", taken_links)
        if link != child:
            builder.add_link(link)
        builder.add_joint(name, kind, prev, link, origin=origin, **({} if axis is None else {"axis": axis}), **terms)
        prev, origin = link, np.eye(4)
    if prev != child:
        builder.add_joint(_unique(f"{jn}:fixed", taken_joints), "fixed", prev, child, origin=T_J_C)


def _gearbox(j, tree, frames, label):
    """``(coefficients, offset)`` of gearbox joint ``j``: ``theta_2 + ratio theta_1 = 0``."""
    where = f"{label}: gearbox joint {j['name']!r}"
    ref = _text(j["el"], "gearbox_reference_body", where)
    ratio = _value(j["el"], "gearbox_ratio", 1.0, where)
    R_M_J = frames.pose(j["key"])[:3, :3]
    coefficients = {}
    for side, link, axis, k in (("parent", j["parent_link"], j["axes"][0], ratio), ("child", j["child_link"], j["axes"][1], 1.0)):
        t = tree.get(link)
        if t is None or t["parent_link"] != ref or t["type"] not in _ONE_AXIS or t["type"] == "prismatic":
            raise SDFError(f"{where}: its {side} link {link!r} is not joined to the gearbox_reference_body {ref!r} "
                           "by one revolute joint, so theta is no joint coordinate")
        a_M = frames.pose(t["key"])[:3, :3] @ t["axes"][0]
        s = float(a_M @ (R_M_J @ axis))
        if abs(abs(s) - 1.0) > 1e-6:
            raise SDFError(f"{where}: the axis of joint {t['name']!r} is not along the gearbox's {side} axis")
        coefficients[t["name"]] = coefficients.get(t["name"], 0.0) + k * np.sign(s)
    return coefficients, 0.0


def _constraints(model, specs):
    """The constraint objects of ``specs`` on the built ``model``, named after their joints."""
    from ..constraints import FrameLoop, JointCoupling, PointLoop

    out = []
    for kind, name, *args in specs:
        if kind == "point":
            out.append(PointLoop(model, args[0], args[1], name=name))
        elif kind == "frame":
            out.append(FrameLoop(model, args[0], args[1], name=name))
        else:
            out.append(JointCoupling(model, args[0], offset=args[1], name=name))
    return tuple(out)
