"""The worked examples of docs/theory.md §7.5, and a few more, as symbolic models.

Each function returns ``(model, s)``: a :class:`SymbolicModel` and a namespace ``s`` holding its
parameter symbols (``s.m1``, ``s.L1``, ...), so that the closed forms of docs/theory.md §7.5 and
of the docstrings below can be written with the very same symbols. Coordinates are the default
``q1, q2, ...`` of :class:`~screwdyn.symbolic.Dynamics`; every joint axis is ``z`` unless said
otherwise.

========================  ==========================================================  ===================
name                      system                                                       docs/theory.md
========================  ==========================================================  ===================
``bent_link``             1-DOF link bent by a constant angle phi, two point masses    --
``planar_2r``             planar 2R, point masses at the link ends, gravity -y         §7.5, (7.13)-(7.15)
``planar_rp``             planar RP, point masses, gravity -y                          --
``cartesian_ppp``         3-DOF Cartesian robot, z then x then y, gravity -z           --
``pr_robot``              PR robot on a horizontal plane (gravity normal to it)        §7.5, (7.16)
``pendulum``              actuated pendulum: gear ratio, rotor, viscous friction       §7.5, (7.17)-(7.19)
``spatial_rrr``           3-DOF spatial arm, axes z, y, x, symbolic everything         --
``particle_xy``           a point mass free in a vertical plane (held on a circle:     §15.8, (15.15)
                          a pendulum, by a Lagrange multiplier)
``four_bar``              planar 3R chain whose tip is pinned to the ground: a         §15.8
                          closed four-bar (a loop constraint)
========================  ==========================================================  ===================

The examples marked ``--`` are not in docs/theory.md. The closed forms in the docstrings of
``bent_link``, ``planar_rp`` and ``cartesian_ppp`` follow from its Lagrangian route (§7.1-§7.3);
``spatial_rrr`` has none written out.
"""
from __future__ import annotations

from types import SimpleNamespace

import sympy as sp

from .model import SymbolicModelBuilder
from .spatial import rot_y, translation

__all__ = ["bent_link", "planar_2r", "planar_rp", "cartesian_ppp", "pr_robot", "pendulum", "spatial_rrr",
           "particle_xy", "four_bar", "WORKED_EXAMPLES", "worked_example"]

Z = (0, 0, 1)


def bent_link():
    """A link of two parts ``l1`` (along the vertical axis ``z0`` of the joint) and ``l2`` (raised
    by the constant angle ``phi`` above the horizontal), with point masses ``m1``, ``m2`` at their
    ends, turning by ``theta = q1`` about ``z0``; gravity ``-g z0``.
    The second part is a fixed joint, merged into the link.

    ``M = m2 l2^2 cos^2 phi``; ``g = 0`` (the masses move on horizontal circles).
    """
    l1, l2, m1, m2, g = sp.symbols("l1 l2 m1 m2 g", positive=True)
    phi = sp.Symbol("phi", real=True)
    b = SymbolicModelBuilder("bent_link", gravity=(0, 0, -g))
    b.add_body("link", "base", "joint", "revolute", axis=Z, mass=m1, com=(0, 0, l1))
    b.add_body("arm", "link", "bend", "fixed", origin=translation((0, 0, l1), rot_y(-phi)), mass=m2, com=(l2, 0, 0))
    return b.build(), SimpleNamespace(l1=l1, l2=l2, m1=m1, m2=m2, g=g, phi=phi)


def planar_2r():
    """Planar 2R with point masses ``m1``, ``m2`` at the ends of links ``L1``, ``L2``; gravity
    ``-g`` along ``y`` of the plane. Closed form: docs/theory.md §7.5, eqs. (7.13)-(7.15), with
    ``g`` for ``g_0``."""
    L1, L2, m1, m2, g = sp.symbols("L1 L2 m1 m2 g", positive=True)
    b = SymbolicModelBuilder("planar_2r", gravity=(0, -g, 0))
    b.add_body("link1", "base", "joint1", "revolute", axis=Z, mass=m1, com=(L1, 0, 0))
    b.add_body("link2", "link1", "joint2", "revolute", axis=Z, origin=translation((L1, 0, 0)), mass=m2,
               com=(L2, 0, 0))
    b.add_frame("tip", "link2", translation((L2, 0, 0)))
    return b.build(), SimpleNamespace(L1=L1, L2=L2, m1=m1, m2=m2, g=g)


def planar_rp():
    """Planar RP. Joint 1 turns the arm by ``q1`` about ``z``; a point mass ``m1`` sits on the arm
    at ``L1``; joint 2 slides a point mass ``m2`` along the arm, at distance ``q2`` from the axis;
    gravity ``-g`` along ``y``.

    ``M = diag(m1 L1^2 + m2 q2^2, m2)``, ``c = (2 m2 q2 qd1 qd2, -m2 q2 qd1^2)``,
    ``g = ((m1 L1 + m2 q2) g cos q1, m2 g sin q1)``.
    """
    L1, m1, m2, g = sp.symbols("L1 m1 m2 g", positive=True)
    b = SymbolicModelBuilder("planar_rp", gravity=(0, -g, 0))
    b.add_body("arm", "base", "joint1", "revolute", axis=Z, mass=m1, com=(L1, 0, 0))
    b.add_body("slider", "arm", "joint2", "prismatic", axis=(1, 0, 0), mass=m2)
    return b.build(), SimpleNamespace(L1=L1, m1=m1, m2=m2, g=g)


def cartesian_ppp():
    """Cartesian robot of three mutually orthogonal prismatic joints, ``q1`` vertical (``z``),
    ``q2`` along ``x``, ``q3`` along ``y``; link masses ``m1, m2, m3``; gravity ``-g z``.

    ``M = diag(m1 + m2 + m3, m2 + m3, m3)``, ``C = 0``, ``g = ((m1 + m2 + m3) g, 0, 0)``.
    """
    m1, m2, m3, g = sp.symbols("m1 m2 m3 g", positive=True)
    b = SymbolicModelBuilder("cartesian_ppp", gravity=(0, 0, -g))
    b.add_body("column", "base", "joint1", "prismatic", axis=(0, 0, 1), mass=m1)
    b.add_body("arm", "column", "joint2", "prismatic", axis=(1, 0, 0), mass=m2)
    b.add_body("wrist", "arm", "joint3", "prismatic", axis=(0, 1, 0), mass=m3)
    return b.build(), SimpleNamespace(m1=m1, m2=m2, m3=m3, g=g)


def pr_robot():
    """PR robot on a horizontal plane (docs/theory.md §7.5, eq. (7.16)). ``q1`` slides link 1
    along ``x`` (its CoM at ``q1 - dc1``); ``q2`` turns link 2 about ``z`` (CoM at ``dc2`` along
    it, inertia ``diag(Ic2xx, Ic2yy, Ic2zz)`` about the CoM). Gravity ``-g0 z`` is normal to the
    plane.

    ``M = [[m1 + m2, -m2 dc2 sin q2], [-m2 dc2 sin q2, Ic2zz + m2 dc2^2]]``,
    ``c = (-m2 dc2 cos q2 qd2^2, 0)``, ``g = 0``.
    """
    m1, m2, dc1, dc2, g0 = sp.symbols("m1 m2 dc1 dc2 g0", positive=True)
    Ic2xx, Ic2yy, Ic2zz = sp.symbols("Ic2xx Ic2yy Ic2zz", positive=True)
    b = SymbolicModelBuilder("pr_robot", gravity=(0, 0, -g0))
    b.add_body("link1", "base", "joint1", "prismatic", axis=(1, 0, 0), mass=m1, com=(-dc1, 0, 0))
    b.add_body("link2", "link1", "joint2", "revolute", axis=Z, mass=m2, com=(dc2, 0, 0),
               inertia=sp.diag(Ic2xx, Ic2yy, Ic2zz))
    return b.build(), SimpleNamespace(m1=m1, m2=m2, dc1=dc1, dc2=dc2, g0=g0, Ic2xx=Ic2xx, Ic2yy=Ic2yy, Ic2zz=Ic2zz)


def pendulum():
    """Actuated pendulum (docs/theory.md §7.5, eqs. (7.17)-(7.19)). ``q1 = theta`` about ``z``
    from the downward vertical; link mass ``m`` with CoM at ``d`` and inertia ``I_l`` about it; tip
    at ``l`` (frame ``"tip"``); motor of rotor inertia ``I_m`` behind a gear of ratio ``n_r``
    (``theta_m = n_r theta``); viscous friction ``b_l`` on the link side and ``b_m`` on the motor
    side, ``b_l + b_m n_r^2`` seen at the joint; gravity ``-g0 y``.

    ``I thdd + m g0 d sin th = n_r tau_m - (b_l + b_m n_r^2) thd + l cos th F_x`` with
    ``I = I_l + m d^2 + I_m n_r^2`` and ``tau = n_r tau_m`` at the joint.
    """
    m, d, l, I_l, I_m, n_r, g0 = sp.symbols("m d l I_l I_m n_r g0", positive=True)
    b_l, b_m = sp.symbols("b_l b_m", nonnegative=True)
    b = SymbolicModelBuilder("pendulum", gravity=(0, -g0, 0))
    b.add_body("link", "base", "joint", "revolute", axis=Z, mass=m, com=(0, -d, 0), inertia=sp.diag(0, 0, I_l),
               rotor_inertia=I_m, gear_ratio=n_r, damping=b_l + b_m * n_r**2)
    b.add_frame("tip", "link", translation((0, -l, 0)))
    return b.build(), SimpleNamespace(m=m, d=d, l=l, I_l=I_l, I_m=I_m, n_r=n_r, g0=g0, b_l=b_l, b_m=b_m)


def spatial_rrr():
    """A 3-DOF spatial arm with non-parallel axes: ``z`` at the base, ``y`` at height ``L1``, ``x``
    at ``L2`` along the second link; masses ``m_k``, CoMs ``lc_k`` along each link, and diagonal
    inertias ``Ixx_k, Iyy_k, Izz_k`` about the CoMs, all symbolic; gravity ``-g z``."""
    L1, L2, g = sp.symbols("L1 L2 g", positive=True)
    m = sp.symbols("m_1:4", positive=True)
    lc = sp.symbols("lc_1:4", real=True)
    I = [sp.diag(*sp.symbols(f"Ixx_{k} Iyy_{k} Izz_{k}", positive=True)) for k in (1, 2, 3)]
    b = SymbolicModelBuilder("spatial_rrr", gravity=(0, 0, -g))
    b.add_body("link1", "base", "joint1", "revolute", axis=Z, mass=m[0], com=(0, 0, lc[0]), inertia=I[0])
    b.add_body("link2", "link1", "joint2", "revolute", axis=(0, 1, 0), origin=translation((0, 0, L1)), mass=m[1],
               com=(lc[1], 0, 0), inertia=I[1])
    b.add_body("link3", "link2", "joint3", "revolute", axis=(1, 0, 0), origin=translation((L2, 0, 0)), mass=m[2],
               com=(0, lc[2], 0), inertia=I[2])
    return b.build(), SimpleNamespace(L1=L1, L2=L2, g=g, m=m, lc=lc, I=I)


def particle_xy():
    """A point mass ``m`` free in a vertical plane: ``q1 = x`` slides along ``x``, ``q2 = y`` along
    ``y`` (a massless carriage, then the mass); gravity ``-g y``. ``l``: the length of the pendulum
    it becomes when held on the circle ``x^2 + y^2 = l^2`` (docs/theory.md §15.8):
    ``lam = m (g y - xd^2 - yd^2) / l^2`` for ``phi = (x^2 + y^2 - l^2) / 2``, i.e. the rod's tension
    ``-lam l = m (l thd^2 + g cos th)`` (``th`` from the downward vertical), eq. (15.15)."""
    m, g, l = sp.symbols("m g l", positive=True)
    b = SymbolicModelBuilder("particle_xy", gravity=(0, -g, 0))
    b.add_body("carriage", "base", "x", "prismatic", axis=(1, 0, 0))
    b.add_body("mass", "carriage", "y", "prismatic", axis=(0, 1, 0), mass=m)
    return b.build(), SimpleNamespace(m=m, g=g, l=l)


def four_bar():
    """A closed four-bar: the planar chain of a crank ``L1`` (joint ``q1`` at the origin), a coupler
    ``L2`` (``q2``) and a rocker ``L3`` (``q3``), point masses ``m1, m2, m3`` at the links' ends,
    gravity ``-g y``, whose tip (frame ``"tip"``) is pinned to the ground at ``(d, 0, 0)``: two
    constraints, one degree of freedom (docs/theory.md §15.8). As a numeric model it is closed by
    ``screwdyn.PointLoop(model, "tip", "base", offset_b=(d, 0, 0))`` (three rows, the third
    redundant: the plane's normal velocity is zero)."""
    L1, L2, L3, d, m1, m2, m3, g = sp.symbols("L1 L2 L3 d m1 m2 m3 g", positive=True)
    b = SymbolicModelBuilder("four_bar", gravity=(0, -g, 0))
    b.add_body("crank", "base", "joint1", "revolute", axis=Z, mass=m1, com=(L1, 0, 0))
    b.add_body("coupler", "crank", "joint2", "revolute", axis=Z, origin=translation((L1, 0, 0)), mass=m2,
               com=(L2, 0, 0))
    b.add_body("rocker", "coupler", "joint3", "revolute", axis=Z, origin=translation((L2, 0, 0)), mass=m3,
               com=(L3, 0, 0))
    b.add_frame("tip", "rocker", translation((L3, 0, 0)))
    return b.build(), SimpleNamespace(L1=L1, L2=L2, L3=L3, d=d, m1=m1, m2=m2, m3=m3, g=g)


WORKED_EXAMPLES = {f.__name__: f for f in (bent_link, planar_2r, planar_rp, cartesian_ppp, pr_robot, pendulum,
                                           spatial_rrr, particle_xy, four_bar)}


def worked_example(name):
    """The model of the worked example ``name`` (a key of :data:`WORKED_EXAMPLES`)."""
    try:
        return WORKED_EXAMPLES[name]()[0]
    except KeyError:
        raise KeyError(f"unknown worked example {name!r}; choose from {sorted(WORKED_EXAMPLES)}") from None
