"""The dynamics functions of the ``modern_robotics`` package (Lynch & Park, ch. 8) and its
computed-torque control (ch. 11: ``ComputedTorque``, ``SimulateControl``), same signatures and
results, computed by screwdyn's compiled kernels.

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

from ..dynamics import (
    bias_torques, forward_dynamics, gravity_torques, inverse_dynamics, joint_torques_from_wrench, mass_matrix,
)
from ..errors import InputError
from ..model import Model

__all__ = ["InverseDynamics", "InverseDynamicsTrajectory", "MassMatrix", "VelQuadraticForces", "GravityForces",
           "EndEffectorForces", "ForwardDynamics", "EulerStep", "ForwardDynamicsTrajectory", "ComputedTorque",
           "SimulateControl"]

_NO_GRAVITY = (0.0, 0.0, 0.0)


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


def _book_example():
    """``(Mlist, Glist, Slist)`` of the book's 3-link example (the module docstring's chain)."""
    M01 = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.089159], [0, 0, 0, 1]])
    M12 = np.array([[0, 0, 1, 0.28], [0, 1, 0, 0.13585], [-1, 0, 0, 0], [0, 0, 0, 1]])
    M23 = np.array([[1, 0, 0, 0], [0, 1, 0, -0.1197], [0, 0, 1, 0.395], [0, 0, 0, 1]])
    M34 = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.14225], [0, 0, 0, 1]])
    G1 = np.diag([0.010267, 0.010267, 0.00666, 3.7, 3.7, 3.7])
    G2 = np.diag([0.22689, 0.22689, 0.0151074, 8.393, 8.393, 8.393])
    G3 = np.diag([0.0494433, 0.0494433, 0.004095, 2.275, 2.275, 2.275])
    Slist = np.array([[1, 0, 1, 0, 1, 0], [0, 1, 0, -0.089, 0, 0], [0, 1, 0, -0.089, 0, 0.425]]).T
    return [M01, M12, M23, M34], [G1, G2, G3], Slist


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


def MassMatrix(thetalist, Mlist, Glist, Slist):
    """The mass matrix ``M(theta)`` (MR eq. 8.57) by the Composite Rigid Body Algorithm (MR builds
    it from ``n`` InverseDynamics calls; the result is the same).

    >>> Mlist, Glist, Slist = _book_example()
    >>> np.round(MassMatrix([0.1, 0.1, 0.1], Mlist, Glist, Slist), 5).tolist()   # the book's result
    [[22.54334, -0.30715, -0.00718], [-0.30715, 1.96851, 0.43216], [-0.00718, 0.43216, 0.19163]]
    """
    return mass_matrix(_model(_NO_GRAVITY, Mlist, Glist, Slist), thetalist)


def VelQuadraticForces(thetalist, dthetalist, Mlist, Glist, Slist):
    """The Coriolis and centripetal torques ``c(theta, dtheta)`` (RNEA with ``g = 0``, ``ddtheta = 0``).

    >>> Mlist, Glist, Slist = _book_example()
    >>> np.round(VelQuadraticForces([0.1, 0.1, 0.1], [0.1, 0.2, 0.3], Mlist, Glist, Slist), 5)
    array([ 0.26453, -0.05505, -0.00689])
    """
    return bias_torques(_model(_NO_GRAVITY, Mlist, Glist, Slist), thetalist, dthetalist)


def GravityForces(thetalist, g, Mlist, Glist, Slist):
    """The torques ``g(theta)`` that hold the robot against gravity ``g`` (a 3-vector).

    >>> Mlist, Glist, Slist = _book_example()
    >>> np.round(GravityForces([0.1, 0.1, 0.1], [0, 0, -9.8], Mlist, Glist, Slist), 5)
    array([ 28.40331, -37.64095,  -5.44159])
    """
    return gravity_torques(_model(g, Mlist, Glist, Slist), thetalist)


def EndEffectorForces(thetalist, Ftip, Mlist, Glist, Slist):
    """The torques ``J_b^T(theta) Ftip`` that make the end-effector apply the wrench ``Ftip``
    (expressed in the tip frame ``{n+1}``) to the environment.

    >>> Mlist, Glist, Slist = _book_example()
    >>> np.round(EndEffectorForces([0.1, 0.1, 0.1], [1, 1, 1, 1, 1, 1], Mlist, Glist, Slist), 5)
    array([1.40955, 1.85771, 1.39241])
    """
    model = _model(_NO_GRAVITY, Mlist, Glist, Slist)
    if "ee" not in model.frame_names:
        raise InputError(f"EndEffectorForces needs the tip frame: Mlist must hold {model.n + 1} transforms "
                         f"(M_{{n,n+1}} last), got {model.n}")
    return joint_torques_from_wrench(model, thetalist, "ee", Ftip, reference="body")


def ForwardDynamics(thetalist, dthetalist, taulist, g, Ftip, Mlist, Glist, Slist):
    """Joint accelerations ``ddtheta = M^{-1} (tau - c - g - J_b^T Ftip)`` (MR eq. 8.82) by the
    Articulated-Body Algorithm, ``O(n)``.

    >>> Mlist, Glist, Slist = _book_example()
    >>> np.round(ForwardDynamics([0.1, 0.1, 0.1], [0.1, 0.2, 0.3], [0.5, 0.6, 0.7], [0, 0, -9.8],
    ...                             [1, 1, 1, 1, 1, 1], Mlist, Glist, Slist), 5)
    array([ -0.97393,  25.58467, -32.91499])
    """
    model = _model(g, Mlist, Glist, Slist)
    return forward_dynamics(model, thetalist, dthetalist, taulist, _tip_wrench(Ftip))


def EulerStep(thetalist, dthetalist, ddthetalist, dt):
    """One first-order Euler step: ``(theta + dt dtheta, dtheta + dt ddtheta)``.

    >>> EulerStep(np.array([0.1, 0.1, 0.1]), np.array([0.1, 0.2, 0.3]), np.array([2, 1.5, 1]), 0.1)
    (array([0.11, 0.12, 0.13]), array([0.3 , 0.35, 0.4 ]))
    """
    return thetalist + dt * np.array(dthetalist), dthetalist + dt * np.array(ddthetalist)


def ForwardDynamicsTrajectory(thetalist, dthetalist, taumat, g, Ftipmat, Mlist, Glist, Slist, dt, intRes):
    """Simulate the chain under the torque history ``taumat (N, n)`` and tip wrenches
    ``Ftipmat (N, 6)`` (or anything that broadcasts to it, e.g. 0), held for ``dt`` each and
    integrated by ``intRes`` Euler steps of ``dt / intRes`` (as MR). Returns ``thetamat, dthetamat``
    ``(N, n)``; row 0 is the initial state and row ``i + 1`` the state after ``taumat[i]``.

    >>> Mlist, Glist, Slist = _book_example()
    >>> taumat = np.array([[3.63, -6.58, -5.57], [3.74, -5.55, -5.5], [4.31, -0.68, -5.19]])
    >>> th, dth = ForwardDynamicsTrajectory(np.array([0.1, 0.1, 0.1]), np.array([0.1, 0.2, 0.3]), taumat,
    ...     [0, 0, -9.8], np.ones((3, 6)), Mlist, Glist, Slist, 0.1, 8)
    >>> np.round(th[-1], 4)
    array([ 0.102 ,  0.7158, -1.2252])
    """
    model = _model(g, Mlist, Glist, Slist)
    tau = np.asarray(taumat, dtype=float)
    if tau.ndim != 2 or tau.shape[1] != model.n:
        raise InputError(f"taumat must have shape (N, {model.n}), got {tau.shape}")
    N = tau.shape[0]
    try:
        F = np.broadcast_to(np.asarray(Ftipmat, dtype=float), (N, 6))
    except ValueError:
        raise InputError(f"Ftipmat must broadcast to shape ({N}, 6), got {np.shape(Ftipmat)}") from None
    steps = int(intRes)
    if steps < 1 or steps != intRes:
        raise InputError(f"intRes must be an integer >= 1, got {intRes!r}")
    h = 1.0 * dt / steps
    thetamat = np.empty((N, model.n))
    dthetamat = np.empty((N, model.n))
    theta = np.array(thetalist, dtype=float)
    dtheta = np.array(dthetalist, dtype=float)
    thetamat[0], dthetamat[0] = theta, dtheta
    for i in range(N - 1):
        fext = _tip_wrench(F[i])
        for _ in range(steps):
            ddtheta = forward_dynamics(model, theta, dtheta, tau[i], fext)
            theta, dtheta = EulerStep(theta, dtheta, ddtheta, h)
        thetamat[i + 1], dthetamat[i + 1] = theta, dtheta
    return thetamat, dthetamat


def ComputedTorque(thetalist, dthetalist, eint, g, Mlist, Glist, Slist, thetalistd, dthetalistd, ddthetalistd, Kp,
                   Ki, Kd):
    """The computed-torque (feedback linearising) controller's torques at one instant (MR eq. 11.35)::

        tau = M(theta) (Kp e + Ki (eint + e) + Kd de) + h(theta, dtheta)   with h of ddtheta_d:
            = ID(theta, dtheta, ddtheta_d + Kp e + Ki (eint + e) + Kd de)

    with ``e = thetad - theta``, ``de = dthetad - dtheta`` and ``eint`` the time integral of ``e``
    so far (MR adds the present error to it, as here); one RNEA call, as ``M a + ID(ddtheta_d)``
    is ``ID(ddtheta_d + a)``. ``Kp``, ``Ki``, ``Kd``: scalar gains (or ``(n,)``). No tip wrench.

    >>> Mlist, Glist, Slist = _book_example()
    >>> np.round(ComputedTorque([0.1, 0.1, 0.1], [0.1, 0.2, 0.3], [0.2, 0.2, 0.2], [0, 0, -9.8], Mlist, Glist,
    ...                         Slist, [1.0, 1.0, 1.0], [2, 1.2, 2], [0.1, 0.1, 0.1], 1.3, 1.2, 1.1), 6)
    array([133.005252, -29.942233,  -3.032769])
    """
    model = _model(g, Mlist, Glist, Slist)
    theta, dtheta = np.asarray(thetalist, dtype=float), np.asarray(dthetalist, dtype=float)
    e = np.asarray(thetalistd, dtype=float) - theta
    a = Kp * e + Ki * (np.asarray(eint, dtype=float) + e) + Kd * (np.asarray(dthetalistd, dtype=float) - dtheta)
    return inverse_dynamics(model, theta, dtheta, np.asarray(ddthetalistd, dtype=float) + a)


def SimulateControl(thetalist, dthetalist, g, Ftipmat, Mlist, Glist, Slist, thetamatd, dthetamatd, ddthetamatd,
                    gtilde, Mtildelist, Gtildelist, Kp, Ki, Kd, dt, intRes):
    """Simulate the computed-torque controller along a reference (MR's ``SimulateControl``): the
    controller (:func:`ComputedTorque`) works from a model of the robot (``gtilde``,
    ``Mtildelist``, ``Gtildelist``), possibly wrong; the robot (``g``, ``Mlist``, ``Glist``) moves
    under its torques and the tip wrenches ``Ftipmat (N, 6)`` (or anything that broadcasts to it,
    e.g. 0), each torque held for ``dt`` and integrated by ``intRes`` Euler steps of ``dt / intRes``;
    the error's integral grows by ``dt e`` after each step. ``thetamatd``, ``dthetamatd``,
    ``ddthetamatd``: the reference ``(N, n)``.

    Returns ``(taumat, thetamat)``, each ``(N, n)``: the torques commanded at each step and the joint
    angles after it (MR's results; MR also plots them with pyplot, which this does not:
    :func:`screwdyn.plot.plot_trajectory` draws a simulation).

    >>> Mlist, Glist, Slist = _book_example()
    >>> t = np.linspace(0.0, 1.0, 11)[:, None]
    >>> thd, dthd, ddthd = 0.1 + 0.5 * t ** 2 * [1, 2, 3], t * [1, 2, 3], np.ones_like(t) * [1, 2, 3]
    >>> tau, th = SimulateControl([0.1, 0.1, 0.1], [0, 0, 0], [0, 0, -9.8], 0, Mlist, Glist, Slist, thd, dthd, ddthd,
    ...                           [0, 0, -9.8], Mlist, Glist, 20, 10, 18, 0.1, 8)
    >>> np.round(tau[0], 4), np.round(th[-1], 4)   # the modern_robotics package's results
    (array([ 50.3108, -32.7146,  -4.0096]), array([0.6936, 1.286 , 1.8309]))
    """
    model = _model(g, Mlist, Glist, Slist)
    thd, dthd, ddthd = (np.asarray(x, dtype=float) for x in (thetamatd, dthetamatd, ddthetamatd))
    if thd.ndim != 2 or thd.shape[1] != model.n or dthd.shape != thd.shape or ddthd.shape != thd.shape:
        raise InputError(f"thetamatd, dthetamatd and ddthetamatd must have shape (N, {model.n}), got "
                         f"{thd.shape}, {dthd.shape}, {ddthd.shape}")
    N = thd.shape[0]
    try:
        F = np.broadcast_to(np.asarray(Ftipmat, dtype=float), (N, 6))
    except ValueError:
        raise InputError(f"Ftipmat must broadcast to shape ({N}, 6), got {np.shape(Ftipmat)}") from None
    steps = int(intRes)
    if steps < 1 or steps != intRes:
        raise InputError(f"intRes must be an integer >= 1, got {intRes!r}")
    h = 1.0 * dt / steps
    theta, dtheta = np.array(thetalist, dtype=float), np.array(dthetalist, dtype=float)
    eint = np.zeros(model.n)
    taumat, thetamat = np.empty((N, model.n)), np.empty((N, model.n))
    for i in range(N):
        tau = ComputedTorque(theta, dtheta, eint, gtilde, Mtildelist, Gtildelist, Slist, thd[i], dthd[i], ddthd[i],
                             Kp, Ki, Kd)
        fext = _tip_wrench(F[i])
        for _ in range(steps):
            theta, dtheta = EulerStep(theta, dtheta, forward_dynamics(model, theta, dtheta, tau, fext), h)
        taumat[i], thetamat[i] = tau, theta
        eint = eint + dt * (thd[i] - theta)
    return taumat, thetamat
