"""Forward kinematics of a tree, generic over the element type (SymPy or NumPy).

``T_{p(i),i}(q_i) = T_parent_body[i] exp([S_i] q_i)`` and ``T_{0,i} = T_{0,p(i)} T_{p(i),i}``,
with body ``i``'s frame on its joint axis and ``S_i = s_i (a_i, 0)`` or ``s_i (0, a_i)`` (``a_i``
the unit axis, ``s_i`` the joint scale, 1 unless a screw list gave a non-unit axis). The model may be a :class:`~screwdyn.model.Model`
(NumPy arrays) or a :class:`~screwdyn.symbolic.SymbolicModel` (SymPy matrices); ``xp`` is the
backend of :mod:`screwdyn.symbolic.backend`.
"""
from __future__ import annotations

from .backend import SYMPY, backend_for
from .spatial import joint_transform

__all__ = ["resolve", "joint_poses", "body_poses", "scaled_axis"]


def resolve(model, *values):
    """``(model, xp)``: SymPy when the model is symbolic or any value holds SymPy objects
    (a numeric :class:`~screwdyn.model.Model` is then converted with
    :meth:`SymbolicModel.from_model`), NumPy otherwise."""
    from .model import SymbolicModel

    if isinstance(model, SymbolicModel):
        return model, SYMPY
    xp = backend_for(*values)
    if xp is SYMPY:
        return SymbolicModel.from_model(model), SYMPY
    return model, xp


def scaled_axis(model, i):
    """``s_i a_i``: the joint axis times the joint scale, the axis part of ``S_i``."""
    return model.joint_axis[i] * model.joint_scale[i]


def joint_poses(model, q, xp):
    """``[T_{p(i),i}(q_i) for i in range(n)]``: the pose of each body in its parent."""
    return [model.T_parent_body[i]
            @ joint_transform(xp, model.joint_type[i], model.joint_axis[i], model.joint_scale[i] * q[i])
            for i in range(model.n)]


def body_poses(model, q, xp, T_parent=None):
    """``[T_{0,i}(q) for i in range(n)]``: the pose of each body in the base frame."""
    T_parent = joint_poses(model, q, xp) if T_parent is None else T_parent
    T0 = []
    for i in range(model.n):
        p = model.parent[i]
        T0.append(T_parent[i] if p < 0 else T0[p] @ T_parent[i])
    return T0
