"""The dynamics functions of the ``modern_robotics`` package (Lynch & Park, ch. 8), same
signatures and results, computed by screwdyn's compiled kernels.

Conventions are those of the book: ``Mlist`` holds ``M_{i-1,i}`` (with ``M_{n,n+1}`` for the
tip), ``Glist`` the spatial inertias ``G_i`` at the link CoM frames, ``Slist`` the space-frame
screw axes as columns, ``g`` the gravity vector, and ``Ftip`` the wrench the end-effector
applies *to the environment*, in the tip frame ``{n+1}``.

>>> import numpy as np
>>> from screwdyn.compat import modern_robotics as mr
>>> M01 = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.089159], [0, 0, 0, 1]])
>>> M12 = np.array([[0, 0, 1, 0.28], [0, 1, 0, 0.13585], [-1, 0, 0, 0], [0, 0, 0, 1]])
>>> M23 = np.array([[1, 0, 0, 0], [0, 1, 0, -0.1197], [0, 0, 1, 0.395], [0, 0, 0, 1]])
>>> M34 = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.14225], [0, 0, 0, 1]])
>>> G1 = np.diag([0.010267, 0.010267, 0.00666, 3.7, 3.7, 3.7])
>>> G2 = np.diag([0.22689, 0.22689, 0.0151074, 8.393, 8.393, 8.393])
>>> G3 = np.diag([0.0494433, 0.0494433, 0.004095, 2.275, 2.275, 2.275])
>>> Slist = np.array([[1, 0, 1, 0, 1, 0], [0, 1, 0, -0.089, 0, 0], [0, 1, 0, -0.089, 0, 0.425]]).T
>>> tau = mr.InverseDynamics([0.1, 0.1, 0.1], [0.1, 0.2, 0.3], [2, 1.5, 1], [0, 0, -9.8],
...                         [1, 1, 1, 1, 1, 1], [M01, M12, M23, M34], [G1, G2, G3], Slist)
>>> np.round(tau, 5)   # the book's documented result: [74.69616155, -33.06766016, -3.23057314]
array([ 74.69616, -33.06766,  -3.23057])
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..dynamics import inverse_dynamics
from ..model import Model

__all__ = ["InverseDynamics", "InverseDynamicsTrajectory"]


@lru_cache(maxsize=32)
def _cached_model(key):
    M_bytes, G_bytes, S_bytes, n, g = key
    Ms = np.frombuffer(M_bytes).reshape(-1, 4, 4)
    Gs = np.frombuffer(G_bytes).reshape(-1, 6, 6)
    S = np.frombuffer(S_bytes).reshape(6, n)
    return Model.from_screws(list(Ms), list(Gs), S, gravity=g, name="modern_robotics_chain")


def _model(g, Mlist, Glist, Slist) -> Model:
    """The chain as a screwdyn Model, built once per distinct set of lists."""
    S = np.ascontiguousarray(np.asarray(Slist, dtype=float))
    if S.ndim == 1:
        S = S.reshape(6, 1)
    Ms = np.ascontiguousarray(np.array(Mlist, dtype=float))
    Gs = np.ascontiguousarray(np.array(Glist, dtype=float))
    g = tuple(float(x) for x in np.asarray(g, dtype=float).reshape(3))
    return _cached_model((Ms.tobytes(), Gs.tobytes(), S.tobytes(), S.shape[1], g))


def _tip_wrench(Ftip):
    """The wrench on the tip body from the environment: minus what the tip applies to it."""
    return {"ee": -np.asarray(Ftip, dtype=float)}


def InverseDynamics(thetalist, dthetalist, ddthetalist, g, Ftip, Mlist, Glist, Slist):
    """Joint torques ``tau = M(theta) ddtheta + c(theta, dtheta) + g(theta) + J^T(theta) Ftip``
    by the Recursive Newton-Euler Algorithm (MR eq. 8.50-8.54)."""
    model = _model(g, Mlist, Glist, Slist)
    return inverse_dynamics(model, thetalist, dthetalist, ddthetalist, _tip_wrench(Ftip))


def InverseDynamicsTrajectory(thetamat, dthetamat, ddthetamat, g, Ftipmat, Mlist, Glist, Slist):
    """``InverseDynamics`` along a trajectory: rows of the ``(N, n)`` matrices are time steps and
    ``Ftipmat`` is ``(N, 6)``; returns ``taumat (N, n)`` (one batched kernel call)."""
    model = _model(g, Mlist, Glist, Slist)
    F = np.asarray(Ftipmat, dtype=float)
    return inverse_dynamics(model, np.asarray(thetamat, dtype=float), np.asarray(dthetamat, dtype=float),
                            np.asarray(ddthetamat, dtype=float), _tip_wrench(F))
