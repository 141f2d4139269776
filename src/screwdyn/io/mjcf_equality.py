"""MuJoCo's ``<equality>`` constraints as screwdyn constraints (read by :func:`screwdyn.load_mjcf`).

From the compiled ``eq_data`` (MuJoCo's ``mj_instantiateEquality``, engine_core_constraint.c):

==========================================  =================================================================
MuJoCo                                      ``model.constraints``
==========================================  =================================================================
``connect body1 body2 anchor``              :class:`~screwdyn.PointLoop` ``(body1, body2, offset_a=anchor,
                                            offset_b=eq_data[3:6])``: the anchor (in body1) and the point of
                                            body2 that was there at ``qpos0``, as MuJoCo compiles it
``connect site1 site2``                     :class:`~screwdyn.PointLoop` between the two sites' positions
``weld body1 body2 anchor relpose           :class:`~screwdyn.FrameLoop` ``(body1, "<eq>:anchor", T_a_b)``:
torquescale``                               the frame ``"<eq>:anchor"`` (body2's axes at ``anchor``) held at
                                            ``T_a_b = (relquat, relpos)`` in body1 (``relpose``, or the pose at
                                            ``qpos0`` when ``relpose`` is left out). ``torquescale = 0``: the
                                            rotation is free, a :class:`~screwdyn.PointLoop` at the anchor.
                                            Any other ``torquescale`` scales only MuJoCo's soft rotational
                                            rows, not the motion of a hard weld.
``weld site1 site2``                        :class:`~screwdyn.FrameLoop` between frames ``"<eq>:site1"`` and
                                            ``"<eq>:site2"`` at the sites
``joint joint1 joint2 polycoef`` (degree    :class:`~screwdyn.JointCoupling`
one: ``polycoef[2:] == 0``)                 ``q1 - c1 q2 = c0 + qpos0_1 - c1 qpos0_2`` (MuJoCo measures both
                                            joints from ``qpos0``); without ``joint2``: ``q1 = c0 + qpos0_1``
``tendon tendon1 tendon2 polycoef`` (fixed  :class:`~screwdyn.JointCoupling` ``L1 - c1 L2 = c0 + L1_0 - c1 L2_0``
tendons, degree one)                        with ``L = sum_k coef_k q_k``, ``L_0`` its length at ``qpos0``
==========================================  =================================================================

MuJoCo's constraints are soft (``solref``, ``solimp``); screwdyn's are exact, so a MuJoCo model
whose equalities are made stiff (small ``solref`` time constant, ``solimp`` near 1) moves as the
screwdyn model does. Constraints are named after their equality (``equality<i>`` when unnamed).
Refused: equalities of spatial tendons, of ball or free joints, on flexes. A polynomial coupling
of degree above one is dropped with an :class:`~screwdyn.errors.MJCFWarning` (``strict=True``
refuses it), and so is an equality inactive at the start (``active="false"``: MuJoCo can switch it
on at run time; screwdyn constraints are always on).
"""
from __future__ import annotations

import numpy as np

from ..spatial import transform

__all__ = ["plan_equalities", "make_constraints"]


def plan_equalities(mujoco, m, body_names, joint_names, quat_matrix):
    """``(refuse, drop, frames, specs)`` for the equalities of compiled model ``m``: what cannot be
    expressed, what is dropped (messages), the frames to add (``(name, body, pose)``) and the
    constraints to make once the model is built (:func:`make_constraints`)."""
    refuse, drop, frames, specs = [], [], [], []
    kinds = {int(mujoco.mjtEq.mjEQ_CONNECT): "connect", int(mujoco.mjtEq.mjEQ_WELD): "weld",
             int(mujoco.mjtEq.mjEQ_JOINT): "joint", int(mujoco.mjtEq.mjEQ_TENDON): "tendon"}
    said = {"joint": "joint coupling", "tendon": "tendon coupling"}
    site = int(mujoco.mjtObj.mjOBJ_SITE)
    taken = set(body_names) | {m.site(s).name for s in range(m.nsite)}
    for i in range(m.neq):
        kind = kinds.get(int(m.eq_type[i]))
        name = m.equality(i).name
        what = f"{said.get(kind, kind or 'flex')} equality constraint " + (repr(name) if name else f"number {i}")
        name = name or f"equality{i}"
        if kind is None:
            refuse.append(f"{what} (of a flex: no rigid-tree equivalent)")
            continue
        if not m.eq_active0[i]:
            drop.append(f"{what} (inactive at the start; dropped)")
            continue
        data = np.array(m.eq_data[i, :11], dtype=float)
        o1, o2 = int(m.eq_obj1id[i]), int(m.eq_obj2id[i])
        if kind in ("connect", "weld"):
            if int(m.eq_objtype[i]) == site:
                b1, b2 = body_names[m.site_bodyid[o1]], body_names[m.site_bodyid[o2]]
                p1, p2 = np.array(m.site_pos[o1]), np.array(m.site_pos[o2])
                T1 = transform(quat_matrix(mujoco, m.site_quat[o1]), p1)
                T2 = transform(quat_matrix(mujoco, m.site_quat[o2]), p2)
            else:   # MuJoCo's body semantic: a connect's points are data[0:3] and data[3:6], a weld's swapped
                b1, b2 = body_names[o1], body_names[o2]
                p1, p2 = (data[0:3], data[3:6]) if kind == "connect" else (data[3:6], data[0:3])
                T1 = transform(quat_matrix(mujoco, data[6:10]), data[3:6])   # (weld) the anchor frame in body1
                T2 = transform(None, data[0:3])                              # (weld) the anchor frame in body2
            if kind == "connect" or data[10] == 0:
                specs.append(("point", name, b1, b2, p1, p2))
                continue
            fa = _unique(f"{name}:site1", taken) if int(m.eq_objtype[i]) == site else b1
            fb = _unique(f"{name}:site2" if int(m.eq_objtype[i]) == site else f"{name}:anchor", taken)
            if fa != b1:
                frames.append((fa, b1, T1))
                T1 = np.eye(4)
            frames.append((fb, b2, T2))
            specs.append(("frame", name, fa, fb, T1))
            continue
        if np.any(data[2:5] != 0):
            drop.append(f"{what}: a polynomial of degree above one (polycoef {' '.join(f'{c:g}' for c in data[:5])}; "
                        "only linear couplings are modelled)")
            continue
        terms, reason = _scalar_terms(mujoco, m, kind, o1, joint_names)
        if o2 >= 0 and reason is None:
            second, reason = _scalar_terms(mujoco, m, kind, o2, joint_names)
        if reason is not None:
            refuse.append(f"{what}: {reason}")
            continue
        coefficients, offset = dict(terms[0]), data[0] + terms[1]
        if o2 >= 0:
            for jn, c in second[0].items():
                coefficients[jn] = coefficients.get(jn, 0.0) - data[1] * c
            offset -= data[1] * second[1]
        specs.append(("coupling", name, coefficients, offset))
    return refuse, drop, frames, specs


def _scalar_terms(mujoco, m, kind, obj, joint_names):
    """``(({joint: k}, value at qpos0), None)`` of a joint or fixed tendon: ``x = sum_j k_j q_j``;
    or ``(None, why not)``."""
    scalar = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    if kind == "joint":
        if int(m.jnt_type[obj]) not in scalar:
            return None, f"joint {joint_names[obj]!r} is a ball or free joint (only hinges and slides couple)"
        return ({joint_names[obj]: 1.0}, float(m.qpos0[m.jnt_qposadr[obj]])), None
    coefficients = {}
    for w in range(m.tendon_adr[obj], m.tendon_adr[obj] + m.tendon_num[obj]):
        if int(m.wrap_type[w]) != int(mujoco.mjtWrap.mjWRAP_JOINT):
            return None, f"tendon {m.tendon(obj).name or obj!r} is a spatial tendon (only fixed tendons are modelled)"
        jn = joint_names[m.wrap_objid[w]]
        coefficients[jn] = coefficients.get(jn, 0.0) + float(m.wrap_prm[w])
    return (coefficients, float(m.tendon_length0[obj])), None


def _unique(name, taken):
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def make_constraints(model, specs) -> tuple:
    """The screwdyn constraints of :func:`plan_equalities`'s ``specs`` on the built ``model``."""
    from ..constraints import FrameLoop, JointCoupling, PointLoop

    out = []
    for kind, name, *args in specs:
        if kind == "point":
            a, b, pa, pb = args
            out.append(PointLoop(model, a, b, offset_a=pa, offset_b=pb, name=name))
        elif kind == "frame":
            a, b, T = args
            out.append(FrameLoop(model, a, b, T_a_b=T, name=name))
        else:
            coefficients, offset = args
            out.append(JointCoupling(model, coefficients, offset=offset, name=name))
    return tuple(out)
