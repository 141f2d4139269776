"""MJCF loader: the rigid-body tree of a MuJoCo model, compiled by MuJoCo itself.

MuJoCo's own compiler (the optional extra ``screwdyn[mjcf]``: ``mujoco-core``, MuJoCo without its
viewer) reads the document, so every MJCF rule is MuJoCo's: defaults and classes, ``<include>``,
``<frame>``, ``<replicate>``, ``<attach>``, ``fromto``, ``inertiafromgeom`` (inertias inferred
from geoms and meshes), ``<compiler angle eulerseq autolimits>``. The screwdyn model is then built
from the compiled arrays (``body_*``, ``jnt_*``, ``dof_*``, ``actuator_*``, ``opt.gravity``).

Mapping (MuJoCo -> screwdyn)
----------------------------
* ``hinge`` -> revolute, ``slide`` -> prismatic, ``free`` -> free-flyer, ``ball`` -> spherical;
  a body without a joint is welded to its parent (merged, as a fixed URDF joint); so is a mocap
  body, at its pose in the model.
* A hinge or slide coordinate equals MuJoCo's ``qpos`` (its ``ref`` included): MuJoCo's body
  pose is the pose at ``qpos = qpos0 = ref``, so the joint's origin holds a rotation (for a slide,
  a translation) by ``-ref`` and ``q = ref`` gives MuJoCo's pose, as Pinocchio's MJCF parser does.
* A body with several joints becomes a chain of joints through massless links, in MuJoCo's
  order; each joint turns about its own anchor ``jnt_pos`` (in the body frame as moved by the
  joints before it), as ``mj_kinematics`` applies them. A screwdyn body frame lies on its joint
  axis (:mod:`screwdyn.model`): the link of a hinge sits at the point of its axis nearest the
  MuJoCo body origin, that of a slide at the body origin, that of a ball at its anchor.
* Names: ``model.joint_names`` are the MuJoCo joint names. The MuJoCo body is the link of its
  last joint (``model.link_names``) when the body origin lies on that joint's axis (slides,
  hinges through the body origin: the usual case), else a frame fixed to that link and the link
  is named ``"<body>:<joint>"``; so is the link of every joint but the last of a body. Every
  MuJoCo body and every named site is a frame (``screwdyn.frame_pose(model, q, "torso")`` is
  MuJoCo's ``xpos``/``xmat``); a site named as a body is the frame ``"<site>:site"``. The base is
  the world body. Unnamed bodies and joints are called ``body<id>`` and ``joint<id>``; unnamed
  sites are left out.
* Joint terms: ``rotor_inertia`` (``gear_ratio`` 1) is ``dof_armature`` plus ``gear^2 armature``
  of the actuators on the joint (MuJoCo's reflected inertia); ``damping`` is ``dof_damping`` plus
  their ``gear^2 damping``; ``friction`` is ``dof_frictionloss`` (MuJoCo enforces it as a soft
  constraint, :func:`screwdyn.friction_torques` as ``friction sign(qd)``); ``q_lower``, ``q_upper`` the
  range of a limited hinge or slide; ``effort_limit`` the joint's ``actuatorfrcrange`` and
  the sum over its joint actuators of ``|gear|`` times the bound on the actuator force
  (``forcerange``, or ``|gain| ctrlrange`` of a plain motor), infinite when any is unbounded.
* Gravity: ``<option gravity>`` (zero when the ``gravity`` flag is disabled).

State layout
------------
The joints come in MuJoCo's order, so hinge and slide coordinates are MuJoCo's ``qpos`` and
``qvel`` entries as they are, and :func:`screwdyn.to_mujoco` / :func:`screwdyn.from_mujoco`
convert a whole state: MuJoCo writes quaternions scalar first, a free joint's ``qpos`` as
``(x, y, z, qw, qx, qy, qz)`` and its ``qvel`` as ``(linear velocity in the world, angular
velocity in the body)``, its force likewise. :func:`from_mujoco_acceleration` and
:func:`to_mujoco_acceleration` convert ``qacc``, which for a free joint also differs by
``omega x v``.

Collision geometry
------------------
Each geom that can collide becomes a :class:`~screwdyn.geometry.Collision` with MuJoCo's contact
parameters (:mod:`screwdyn.io.collisions`): on a moving body in ``model.collisions``, fixed in the
world (the world body's floor and obstacles, bodies welded to it) in ``model.environment``, which
:func:`screwdyn.detect` uses by default.

Not modelled
------------
Joint-limit forces, ball joint ranges, MJCF's explicit contact ``<pair>`` and ``<exclude>``
elements. What MuJoCo would add to the smooth tree dynamics and screwdyn cannot express is
refused with a :class:`~screwdyn.errors.ModelError` naming it, or, where the tree's ``M``, ``C``,
``g`` and inverse/forward dynamics stay MuJoCo's with that feature switched off, loaded with a
:class:`MJCFWarning` saying what was dropped (``strict=True`` refuses these too):

=====================================================  ===========  ===========
feature                                                strict=False strict=True
=====================================================  ===========  ===========
flex (deformables), flex equalities                    refused      refused
equalities of spatial tendons or of ball/free joints   refused      refused
tendon armature, armature of non-joint actuators       refused      refused
  (both couple joints in ``M``)
armature or damping of actuators on ball/free joints   refused      refused
joint or tendon equalities of degree above one         warning      refused
inactive equality constraints (``active="false"``)     warning      refused
tendons (their springs, damping, friction, limits      warning      refused
  and the actuators driving them are dropped)
actuators on sites, bodies, slider-cranks              warning      refused
joint springs (``stiffness``, polynomial stiffness),   warning      refused
  polynomial damping
fluid forces (density, viscosity, wind), gravcomp      warning      refused
plugins                                                warning      refused
=====================================================  ===========  ===========

Tendons are kept with a warning rather than refused because many only carry actuator forces or
sensors, or nothing at all (gymnasium's humanoid declares two hip-knee tendons that nothing
uses): the tree dynamics stay exact, and the warning names what was dropped. A tendon's limit is
an inequality, like the joint limits and contacts that screwdyn leaves to the caller.

Equality constraints
--------------------
Active ``<equality connect | weld | joint | tendon>`` (joint and fixed-tendon couplings of degree
one) become ``model.constraints`` (:mod:`screwdyn.io.mjcf_equality` gives the mapping and
MuJoCo's semantics), which the constrained functions apply; the unconstrained ones
(``inverse_dynamics``, ``mass_matrix``, ``forward_dynamics``) give the open tree's. MuJoCo's
constraints are soft (``solref``, ``solimp``), screwdyn's exact.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

from ..configuration import from_mujoco, to_mujoco
from ..errors import InputError, MJCFWarning, ModelError
from ..inertia import RigidBody
from ..model import FREE_FLYER, Model, ModelBuilder
from ..spatial import exp_so3, transform
from .mjcf_equality import make_constraints, plan_equalities

__all__ = ["MJCFWarning", "from_mujoco_acceleration", "load_mjcf", "to_mujoco_acceleration"]

_INSTALL_HINT = "reading MJCF needs MuJoCo 4.0 (Python >= 3.11): pip install 'screwdyn[mjcf]' (or mujoco==4.0.0)"

# MuJoCo's mjtJoint values, and the screwdyn joint type each becomes.
_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3
_JOINT_TYPE = {_FREE: "free_flyer", _BALL: "spherical", _SLIDE: "prismatic", _HINGE: "revolute"}
_MJ_TYPE_NAME = {_FREE: "free", _BALL: "ball", _SLIDE: "slide", _HINGE: "hinge"}


def _mujoco():
    try:
        import mujoco
    except ImportError as e:
        raise ImportError(f"{_INSTALL_HINT} ({e})") from e
    return mujoco


# ---------------------------------------------------------------------------- compiling
def _compile(source):
    """``(MjModel, label)`` from a path, MJCF text or an ``mujoco.MjModel``."""
    if type(source).__name__ == "MjModel" and type(source).__module__.startswith("mujoco"):
        return source, "MuJoCo model"
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ModelError(f"MJCF bytes are not UTF-8 text: {e}") from None
    if isinstance(source, str) and source.strip().startswith("<"):
        mujoco, label = _mujoco(), "MJCF string"
        compile_it, arg = mujoco.MjModel.from_xml_string, source
    elif isinstance(source, (str, os.PathLike)):
        if isinstance(source, str) and not source.strip():
            raise ModelError("empty MJCF document (got a blank string, expected a path or XML text)")
        path = Path(source)
        label = f"MJCF file {str(path)!r}"
        if not path.exists():
            raise ModelError(f"{label} does not exist")
        if path.is_dir():
            raise ModelError(f"MJCF path {str(path)!r} is a directory, not a file")
        mujoco = _mujoco()
        compile_it, arg = mujoco.MjModel.from_xml_path, str(path)
    else:
        raise TypeError(f"load_mjcf: source must be a path, MJCF text or a mujoco.MjModel, got {type(source).__name__}")
    try:
        return compile_it(arg), label
    except ValueError as e:   # MuJoCo's XML and compiler errors
        raise ModelError(f"{label}: MuJoCo cannot compile it: {e}") from None


def _names(m, kind: str, count: int, generic: str) -> list:
    """MuJoCo names of ``count`` objects of ``kind`` (``m.body``, ``m.joint``, ...); unnamed ones
    get ``generic.format(id)`` (made unique)."""
    get = getattr(m, kind)
    names = [get(i).name for i in range(count)]
    taken = set(names)
    for i, nm in enumerate(names):
        if not nm:
            nm = generic.format(i)
            while nm in taken:
                nm += "_"
            names[i] = nm
            taken.add(nm)
    return names


def _quat_matrix(mujoco, quat) -> np.ndarray:
    R = np.empty(9)
    mujoco.mju_quat2Mat(R, np.asarray(quat, dtype=float))
    return R.reshape(3, 3)


# ---------------------------------------------------------------------------- what is left out
def _check_features(m, strict: bool, label: str):
    """Refuse what the tree cannot express; warn (or refuse when strict) about what it drops."""
    mujoco = _mujoco()
    refuse, drop = [], []

    def named(kind, i, what):
        nm = mujoco.mj_id2name(m, getattr(mujoco.mjtObj, f"mjOBJ_{kind.upper()}"), i)
        return f"{what} {nm!r}" if nm else f"{what} number {i}"

    for i in range(m.nflex):
        refuse.append(f"{named('flex', i, 'flex')} (a deformable body: no rigid-tree equivalent)")
    body_names, joint_names = _names(m, "body", m.nbody, "body{}"), _names(m, "joint", m.njnt, "joint{}")
    eq_refuse, eq_drop, eq_frames, eq_specs = plan_equalities(mujoco, m, body_names, joint_names, _quat_matrix)
    refuse += eq_refuse
    coupled = {int(o) for i in range(m.neq) if m.eq_active0[i] and int(m.eq_type[i]) == int(mujoco.mjtEq.mjEQ_TENDON)
               for o in (m.eq_obj1id[i], m.eq_obj2id[i]) if o >= 0}
    drop += eq_drop
    for i in range(m.ntendon):
        what = named("tendon", i, "tendon")
        if m.tendon_armature[i] != 0:
            refuse.append(f"{what}: its armature couples the joints in the mass matrix")
            continue
        parts = [name for name, on in (
            ("stiffness", m.tendon_stiffness[i] != 0 or np.any(m.tendon_stiffnesspoly[i] != 0)),
            ("damping", m.tendon_damping[i] != 0 or np.any(m.tendon_dampingpoly[i] != 0)),
            ("frictionloss", m.tendon_frictionloss[i] != 0), ("length limit", bool(m.tendon_limited[i])))
            if on]
        driven = any(int(m.actuator_trntype[a]) == int(mujoco.mjtTrn.mjTRN_TENDON) and m.actuator_trnid[a, 0] == i
                     for a in range(m.nu))
        if parts or driven or i not in coupled:   # a fixed tendon that only an equality uses is fully modelled
            drop.append(f"{what} ({', '.join(parts) + ' and ' if parts else ''}the actuators and sensors on it dropped)")
    joint_trn = (int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT))
    for a in range(m.nu):
        what = named("actuator", a, "actuator")
        trn = int(m.actuator_trntype[a])
        armature = m.actuator_armature[a] != 0
        damping = m.actuator_damping[a] != 0 or np.any(m.actuator_dampingpoly[a] != 0)
        if trn in joint_trn:
            j = m.actuator_trnid[a, 0]
            if m.jnt_type[j] in (_FREE, _BALL) and (armature or damping):
                refuse.append(f"{what}: armature or damping on the {_MJ_TYPE_NAME[m.jnt_type[j]]} joint "
                              f"{m.joint(j).name!r} (reflected through a gear vector: couples its degrees of freedom)")
            elif np.any(m.actuator_dampingpoly[a] != 0):
                drop.append(f"{what}: polynomial damping (only linear damping is modelled)")
        elif armature:
            refuse.append(f"{what}: its armature couples the joints it drives in the mass matrix")
        elif trn != int(mujoco.mjtTrn.mjTRN_TENDON):   # tendon actuators are named with their tendon
            drop.append(f"{what} (drives a site, body or slider-crank; dropped)")
    springs = [m.joint(j).name or f"joint{j}" for j in range(m.njnt)
               if m.jnt_stiffness[j] != 0 or np.any(m.jnt_stiffnesspoly[j] != 0)]
    if springs:
        drop.append(f"the springs (stiffness) of joints {springs}")
    poly = sorted({m.joint(m.dof_jntid[d]).name or f"joint{m.dof_jntid[d]}" for d in range(m.nv)
                   if np.any(m.dof_dampingpoly[d] != 0)})
    if poly:
        drop.append(f"the polynomial damping of joints {poly} (only linear damping is modelled)")
    if m.opt.density != 0 or m.opt.viscosity != 0 or np.any(m.opt.wind != 0):
        drop.append(f"fluid forces (<option density={m.opt.density:g} viscosity={m.opt.viscosity:g} "
                    f"wind={' '.join(f'{w:g}' for w in m.opt.wind)}>)")
    gravcomp = [m.body(b).name or f"body{b}" for b in range(m.nbody) if m.body_gravcomp[b] != 0]
    if gravcomp:
        drop.append(f"gravity compensation (gravcomp) of bodies {gravcomp}")
    if m.nplugin:
        drop.append(f"{m.nplugin} engine plugin instance(s)")
    if refuse:
        raise ModelError(f"{label} has what a kinematic tree cannot express: " + "; ".join(refuse))
    if drop and strict:
        raise ModelError(f"{label}: strict=True refuses what the screwdyn model would leave out: " + "; ".join(drop)
                         + " (strict=False loads the model without them)")
    if drop:
        warnings.warn(f"{label}: not modelled: " + "; ".join(drop), MJCFWarning, stacklevel=3)
    return eq_frames, eq_specs


def _unique(name: str, taken: set, suffix: str = "_") -> str:
    """``name``, with ``suffix`` appended until it is not in ``taken``; then taken."""
    while name in taken:
        name += suffix
    taken.add(name)
    return name


def _link_point(jtype: int, jnt_pos, axis) -> np.ndarray:
    """Where the joint's link frame sits, in the MuJoCo body frame: the point of a hinge's axis
    nearest the body origin, a ball's anchor, the body origin for a slide or free joint."""
    if jtype == _HINGE:
        p = jnt_pos - (jnt_pos @ axis) * axis
    elif jtype == _BALL:
        p = jnt_pos
    else:
        return np.zeros(3)
    return np.zeros(3) if np.linalg.norm(p) <= 1e-12 * max(1.0, np.linalg.norm(jnt_pos)) else p


def _joint_terms(m, j: int, acts: list) -> dict:
    """``ModelBuilder.add_joint`` keywords of MuJoCo joint ``j`` driven by the actuators ``acts``:
    armature and damping (with the actuators' reflected ``gear^2`` terms), frictionloss, limits."""
    nv = {_FREE: 6, _BALL: 3}.get(int(m.jnt_type[j]), 1)
    dofs = slice(m.jnt_dofadr[j], m.jnt_dofadr[j] + nv)
    if nv > 1:   # per degree of freedom; actuators with armature or damping here were refused
        terms = {"rotor_inertia": m.dof_armature[dofs], "damping": m.dof_damping[dofs],
                 "friction": m.dof_frictionloss[dofs]}
        if nv == 6:   # MuJoCo's free dofs: linear (world axes) first; screwdyn's: angular first, body axes
            for key, value in terms.items():
                if np.ptp(value[:3]) != 0:
                    raise ModelError(f"free joint {m.joint(j).name!r}: its linear dofs have different "
                                     f"{key.replace('rotor_inertia', 'armature')} {value[:3]} along the world "
                                     "axes, which no body-frame joint term can express")
                terms[key] = value[[3, 4, 5, 0, 1, 2]]
        return {key: tuple(float(x) for x in value) for key, value in terms.items()}
    gear2 = np.array([m.actuator_gear[a, 0] ** 2 for a in acts])
    terms = {"rotor_inertia": float(m.dof_armature[dofs][0] + gear2 @ m.actuator_armature[acts]),
             "damping": float(m.dof_damping[dofs][0] + gear2 @ m.actuator_damping[acts]),
             "friction": float(m.dof_frictionloss[dofs][0]), "gear_ratio": 1.0, "effort": _effort_limit(m, j, acts)}
    if m.jnt_limited[j]:
        terms.update(lower=float(m.jnt_range[j, 0]), upper=float(m.jnt_range[j, 1]))
    return terms


def _effort_limit(m, j: int, joint_actuators) -> float:
    """Bound on the joint force from ``actuatorfrcrange`` and the joint's actuators (inf: none)."""
    mujoco = _mujoco()
    bound = np.inf
    if m.jnt_actfrclimited[j]:
        bound = float(np.max(np.abs(m.jnt_actfrcrange[j])))
    total = 0.0
    for a in joint_actuators:
        gear = abs(float(m.actuator_gear[a, 0]))
        if m.actuator_forcelimited[a]:
            force = float(np.max(np.abs(m.actuator_forcerange[a])))
        elif (int(m.actuator_gaintype[a]) == int(mujoco.mjtGain.mjGAIN_FIXED) and m.actuator_ctrllimited[a]
              and int(m.actuator_biastype[a]) == int(mujoco.mjtBias.mjBIAS_NONE)
              and int(m.actuator_dyntype[a]) == int(mujoco.mjtDyn.mjDYN_NONE)):
            force = abs(float(m.actuator_gainprm[a, 0])) * float(np.max(np.abs(m.actuator_ctrlrange[a])))
        else:
            force = np.inf
        total += gear * force
    return min(bound, total) if joint_actuators else bound


# ---------------------------------------------------------------------------- the loader
def load_mjcf(source, *, strict=False) -> Model:
    """Load the rigid-body tree of a MuJoCo model (MJCF).

    Parameters
    ----------
    source:
        A path (``str`` or :class:`pathlib.Path`) of an MJCF file, the MJCF text itself (a
        string whose stripped start is ``<``; ``<include>`` files are then found relative to the
        working directory), or a compiled ``mujoco.MjModel``.
    strict:
        Refuse, rather than warn about, anything of the file that the model leaves out (the
        table in :mod:`screwdyn.io.mjcf`), and make implausible inertias an error.

    MuJoCo's compiler reads the file (``pip install 'screwdyn[mjcf]'``), so defaults, classes,
    includes, ``fromto`` and inertias inferred from geoms are MuJoCo's. Joints are in MuJoCo's
    order; hinge and slide coordinates are MuJoCo's ``qpos`` (``ref`` included), free and ball
    joints convert with :func:`screwdyn.from_mujoco`. The geoms that collide are kept as
    ``model.collisions`` and, fixed in the world, ``model.environment``.

    >>> model = load_mjcf('''<mujoco model="pole"><worldbody><body name="pole">
    ...   <joint name="hinge" axis="0 1 0" range="-90 90" damping="0.1" armature="0.01"/>
    ...   <geom type="capsule" fromto="0 0 0 0 0 1" size="0.05" mass="1"/>
    ... </body></worldbody></mujoco>''')
    >>> model
    Model('pole', n=1, joints=R, mass=1 kg)
    >>> model.link_names, model.com, model.q_lower, model.damping, model.armature
    (('pole',), array([[0. , 0. , 0.5]]), array([-1.57079633]), array([0.1]), array([0.01]))

    Raises :class:`~screwdyn.errors.ModelError` when MuJoCo cannot compile the document or it
    holds something the tree cannot express, naming it; :class:`ImportError` without MuJoCo.
    """
    mujoco = _mujoco()
    m, label = _compile(source)
    eq_frames, eq_specs = _check_features(m, strict, label)

    body_names = _names(m, "body", m.nbody, "body{}")
    joint_names = _names(m, "joint", m.njnt, "joint{}")
    model_name = m.names[: m.names.index(b"\0")].decode() or "mujoco"
    gravity = np.zeros(3) if m.opt.disableflags & int(mujoco.mjtDisableBit.mjDSBL_GRAVITY) else np.array(m.opt.gravity)
    builder = ModelBuilder(name=model_name, base=body_names[0], gravity=gravity, strict=strict)

    actuators = {}     # joint -> its joint-transmission actuators
    for a in range(m.nu):
        if int(m.actuator_trntype[a]) in (int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT)):
            actuators.setdefault(int(m.actuator_trnid[a, 0]), []).append(a)

    links, joints_taken = set(body_names), set(joint_names)
    for b in range(1, m.nbody):
        body = body_names[b]
        parent = body_names[m.body_parentid[b]]
        R_inertia = _quat_matrix(mujoco, m.body_iquat[b])
        inertial = RigidBody(m.body_mass[b], m.body_ipos[b], R_inertia @ np.diag(m.body_inertia[b]) @ R_inertia.T)
        # T_before: pose of the MuJoCo body frame, as the joints before j leave it, in the link `parent`
        T_before = transform(_quat_matrix(mujoco, m.body_quat[b]), m.body_pos[b])
        link = parent
        joints = range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b])
        for j in joints:
            jtype = int(m.jnt_type[j])
            axis = np.array(m.jnt_axis[j])
            anchor = _link_point(jtype, np.array(m.jnt_pos[j]), axis)
            origin = T_before @ transform(None, anchor)
            ref = m.qpos0[m.jnt_qposadr[j]]
            if jtype == _HINGE:
                origin = origin @ transform(exp_so3(-ref * axis))
            elif jtype == _SLIDE:
                origin = origin @ transform(None, -ref * axis)
            elif jtype == _FREE:
                origin = np.eye(4)       # MuJoCo places a free (top-level) body by its qpos alone
            link = body if j == joints[-1] and not anchor.any() else _unique(f"{body}:{joint_names[j]}", links)
            builder.add_body(link, parent, joint_names[j], _JOINT_TYPE[jtype], axis=axis, origin=origin,
                             inertial=inertial if link == body else None, **_joint_terms(m, j, actuators.get(j, [])))
            parent = link
            T_before = transform(None, -anchor)
        if link != body:   # no joint, or the body origin off its last joint's axis: fixed to that link
            builder.add_body(body, parent, _unique(f"{body}:fixed", joints_taken), "fixed", origin=T_before,
                             inertial=inertial)
    for s in range(m.nsite):
        if m.site(s).name:
            builder.add_frame(_unique(m.site(s).name, links, ":site"), body_names[m.site_bodyid[s]],
                              transform(_quat_matrix(mujoco, m.site_quat[s]), m.site_pos[s]))
    for name, body, pose in eq_frames:
        builder.add_frame(name, body, pose)
    try:
        model = builder.build()
    except ModelError as e:
        raise ModelError(f"{label}: {e}") from None
    mj_order = tuple(joint_names)
    if model.joint_names != mj_order:   # both are depth-first in declaration order
        raise ModelError(f"{label}: internal error: joint order {model.joint_names} differs from MuJoCo's {mj_order}")
    from .collisions import mjcf_collisions
    from .visuals import mjcf_visuals   # the geoms, for the viewer (the dynamics ignore them)

    visuals = mjcf_visuals(m, body_names)
    collisions, obstacles = mjcf_collisions(m, body_names, model)
    if visuals or collisions or obstacles:
        from ..environment import Environment
        model = model.replace(visuals=visuals, collisions=collisions,
                              environment=Environment(*obstacles) if obstacles else None)
    return model.replace(constraints=make_constraints(model, eq_specs)) if eq_specs else model


# ---------------------------------------------------------------------------- accelerations
def _free_dofs(model):
    """``(k, 6)`` velocity indices of the model's free-flyers."""
    return model.idx_vs[model.joint_type == FREE_FLYER][:, None] + np.arange(6)


def from_mujoco_acceleration(model: Model, qpos, qvel, qacc):
    """``qdd`` of ``model`` from MuJoCo's ``qacc`` at ``(qpos, qvel)`` (one state or a batch).

    MuJoCo's ``qacc`` is the time derivative of its ``qvel``; for a free joint that is
    ``(a_world, omega_dot)``, the world-frame acceleration of the body origin, while screwdyn's
    ``qdd`` differentiates the body twist ``(omega, R^T v_world)``:
    ``d/dt (R^T v_world) = R^T a_world - omega x (R^T v_world)``. Every other entry is equal
    (joints in ``model.joint_names`` order, as :func:`load_mjcf` keeps MuJoCo's).
    """
    _, v, qdd = from_mujoco(model, qpos, qvel, qacc)   # qacc's blocks turn as qvel's
    idx = _free_dofs(model)
    if idx.size:
        qdd[..., idx[:, 3:]] -= np.cross(v[..., idx[:, :3]], v[..., idx[:, 3:]])
    return qdd


def to_mujoco_acceleration(model: Model, q, v, qdd):
    """MuJoCo's ``qacc`` from ``qdd`` of ``model`` at ``(q, v)``: the inverse of
    :func:`from_mujoco_acceleration`."""
    qdd = np.array(qdd, dtype=float)
    v = np.asarray(v, dtype=float)
    idx = _free_dofs(model)
    if idx.size:
        if qdd.ndim == 0 or qdd.shape[-1] != model.nv or v.ndim == 0 or v.shape[-1] != model.nv:
            raise InputError(f"v and qdd must have shape (..., {model.nv}), got {v.shape} and {qdd.shape}")
        qdd[..., idx[:, 3:]] += np.cross(v[..., idx[:, :3]], v[..., idx[:, 3:]])
    return to_mujoco(model, q, v, qdd)[2]
