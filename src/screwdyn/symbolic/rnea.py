"""The recursive Newton-Euler algorithm (docs/theory.md §6), one generic implementation for SymPy and NumPy.

``tau = M(q) qdd + C(q, qd) qd + g(q)`` (plus the joint-space terms of the model: reflected
rotor inertia ``n_r^2 I_m qdd``, viscous ``b qd`` and Coulomb ``f_c sign(qd)`` friction).
Twists ``(omega, v)`` and wrenches ``(n, f)`` are written in each body's own frame, which lies
on its joint axis, so ``S_i = (a_i, 0)`` (revolute) or ``(0, a_i)`` (prismatic), times the joint
scale.

This is the readable reference of :mod:`screwdyn.symbolic`: it runs on SymPy expressions for
closed-form dynamics and on floats for checking; the compiled kernels of
:mod:`screwdyn.algorithms` are the fast numeric path.
"""
from __future__ import annotations

from .kinematics import joint_poses, resolve, scaled_axis
from .spatial import Ad, ad, inverse_transform, motion_subspace, spatial_inertia

__all__ = ["rnea"]


def rnea(model, q, qd, qdd, *, f_ext=None, joint_terms=True):
    """Inverse dynamics by RNEA: the joint forces ``tau`` for ``(q, qd, qdd)``.

    ``model``: :class:`~screwdyn.model.Model` or :class:`~screwdyn.symbolic.SymbolicModel`.
    ``q, qd, qdd``: sequences of ``n`` numbers or SymPy expressions; with any SymPy input (or a
    symbolic model) the result is a SymPy ``n x 1`` Matrix, otherwise a NumPy ``(n,)`` array.
    ``f_ext``: optional ``{body: wrench}``, a wrench ``(n, f)`` applied to the body by the
    environment, written in the body's frame. ``joint_terms``: add the model's rotor inertia and
    friction (``n_r^2 I_m qdd + b qd + f_c sign(qd)``) after the two passes.
    """
    model, xp = resolve(model, q, qd, qdd)
    n = model.n
    T_p_i = joint_poses(model, q, xp)
    S = [motion_subspace(xp, model.joint_type[i], scaled_axis(model, i)) for i in range(n)]
    X = [Ad(xp, inverse_transform(xp, T_p_i[i])) for i in range(n)]   # [Ad_{T_{i,p(i)}}]
    V = [None] * n
    dV = [None] * n
    V_base = xp.zeros(6)
    dV_base = xp.concat(xp.zeros(3), -model.gravity)   # the base accelerates by -g: gravity for free

    # Pass 1, outward: V_i = [Ad_{T_{i,p}}] V_p + S_i qd_i
    #                  dV_i = [Ad_{T_{i,p}}] dV_p + [ad_{V_i}] S_i qd_i + S_i qdd_i
    for i in range(n):
        p = model.parent[i]
        V_p, dV_p = (V_base, dV_base) if p < 0 else (V[p], dV[p])
        V[i] = X[i] @ V_p + S[i] * qd[i]
        dV[i] = X[i] @ dV_p + (ad(xp, V[i]) @ S[i]) * qd[i] + S[i] * qdd[i]

    # Pass 2, inward: F_i = G_i dV_i - [ad_{V_i}]^T G_i V_i + sum_children [Ad_{T_{c,i}}]^T F_c
    #                 tau_i = S_i^T F_i
    F = [xp.zeros(6) for _ in range(n)]
    tau = [0] * n
    for i in reversed(range(n)):
        G = spatial_inertia(xp, model.mass[i], model.com[i], model.inertia_com[i])
        F[i] = F[i] + G @ dV[i] - ad(xp, V[i]).T @ (G @ V[i])
        if f_ext is not None and i in f_ext:
            F[i] = F[i] - xp.vector(f_ext[i])
        tau[i] = xp.dot(S[i], F[i])
        p = model.parent[i]
        if p >= 0:
            F[p] = F[p] + X[i].T @ F[i]

    # Joint-space terms read from the model (docs/theory.md eqs. (4.5), (4.6)): rotor inertia and friction.
    if joint_terms:
        for i in range(n):
            tau[i] = (tau[i] + model.gear_ratio[i] ** 2 * model.rotor_inertia[i] * qdd[i]
                      + model.damping[i] * qd[i] + model.friction[i] * xp.sign(qd[i]))
    return xp.vector(tau)
