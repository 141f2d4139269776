"""Base parameters: the combinations of the inertial parameters that the joint torques determine.

Some columns of the regressor ``Y`` (:mod:`.torque_regressor`) are zero (the parameter never
acts on a joint), others are linear combinations of the columns kept before them. With the
independent columns ``Y_b = Y[..., independent]`` and the dependent ones ``Y_d = Y_b B``::

    tau = Y pi = Y_b beta,    beta = K pi,    K[:, independent] = 1,    K[:, dependent] = B

``beta`` (the base parameters) is what measured torques can identify. :func:`base_parameters`
finds ``K`` numerically from the regressor at random states (Gautier 1990).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .._dask import is_dask
from ..dispatch import check_model
from ..model import Model
from ..model_params import inertial_parameters, parameter_names
from .torque_regressor import regressor

__all__ = ["BaseParameters", "base_parameters", "base_regressor"]


@dataclass(frozen=True, eq=False)
class BaseParameters:
    """The identifiable (base) parameters of a model: ``beta = K pi``, ``Y pi = Y_b beta``.

    Attributes
    ----------
    names : ``(r,)`` a name per base parameter: the independent parameter, then the dependent
        ones regrouped into it with their coefficients, e.g. ``"Izz_link1 + 0.0182*m_link2 + Iyy_link2"``.
    K : ``(r, p)`` the matrix mapping the full ``pi`` to ``beta``; ``K[:, independent] = 1_r``.
    independent : ``(r,)`` indices into ``pi`` of the independent columns: ``Y_b = Y[..., independent]``.
    unidentifiable : indices of the parameters that do not enter the torques at all.
    parameter_names : ``(p,)`` names of the entries of ``pi``.
    armature, viscous, coulomb : which per-joint columns ``pi`` carries.
    """

    names: tuple
    K: np.ndarray
    independent: np.ndarray
    unidentifiable: np.ndarray
    parameter_names: tuple
    armature: bool
    viscous: bool
    coulomb: bool

    @property
    def rank(self) -> int:
        return len(self.independent)

    @property
    def flags(self) -> dict:
        return dict(armature=self.armature, viscous=self.viscous, coulomb=self.coulomb)

    def from_full(self, pi) -> np.ndarray:
        """``beta = K pi``."""
        return self.K @ np.asarray(pi, dtype=float)

    def of_model(self, model) -> np.ndarray:
        """The model's own base parameters ``K inertial_parameters(model)``."""
        return self.K @ inertial_parameters(model, **self.flags)

    def reduce(self, Y) -> np.ndarray:
        """``Y_b = Y[..., independent]`` from a full regressor (a Dask array stays one, lazily)."""
        return (Y if is_dask(Y) else np.asarray(Y))[..., self.independent]

    def full(self, beta, prior) -> np.ndarray:
        """The ``pi`` nearest to ``prior`` (Euclidean) with ``K pi = beta``: ``prior + K^+ (beta - K prior)``."""
        prior = np.asarray(prior, dtype=float)
        return prior + np.linalg.lstsq(self.K, np.asarray(beta, dtype=float) - self.K @ prior, rcond=None)[0]

    def table(self, *columns, headers=("value",), fmt="{:>13.6g}") -> str:
        """A text table: one row per base parameter, its ``columns`` of ``(r,)`` values, then its name."""
        lines = ["  # " + " ".join(f"{h:>13}" for h in headers) + "  base parameter"]
        for k, name in enumerate(self.names):
            lines.append(f"{k:>3} " + " ".join(fmt.format(c[k]) for c in columns) + "  " + name)
        return "\n".join(lines)


def _sample_states(model, rng, count):
    """Random states spread over the joint ranges (finite limits, else [-pi, pi] / [-1, 1] m)."""
    n = model.n
    if model.nq != n:   # quaternions: uniform rotations (screwdyn.random_configuration)
        from ..configuration import random_configuration
        q = random_configuration(model, rng, size=count)
    else:
        default = np.where(model.joint_type == 0, np.pi, 1.0)
        lo = np.where(np.isfinite(model.q_lower), model.q_lower, -default)
        hi = np.where(np.isfinite(model.q_upper), model.q_upper, default)
        q = lo + (hi - lo) * rng.random((count, n))
    return q, rng.normal(size=(count, n)), rng.normal(size=(count, n))


def _combo_name(names, lead, coefs, dep):
    s = names[lead]
    for c, d in zip(coefs, dep):
        if c == 0.0:
            continue
        sign = " - " if c < 0 else " + "
        a = abs(c)
        s += sign + (names[d] if abs(a - 1.0) < 1e-9 else f"{a:.6g}*{names[d]}")
    return s


_BASE_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def base_parameters(model: Model, *, armature=False, viscous=False, coulomb=False, samples=None, seed=0,
                    tol=1e-8) -> BaseParameters:
    """The base parameters of ``model``, found numerically (Gautier 1990) on random states.

    The regressor is stacked at ``samples`` random states (default: enough for three times as
    many rows as parameters, at least 30 states), its columns are scaled to unit norm, and

    1. the rank ``r`` comes from QR with column pivoting (``scipy.linalg.qr(pivoting=True)``):
       the number of ``|R_kk| > tol |R_00|``;
    2. the independent columns are chosen in the order of ``pi`` (body 0 first, the joints'
       extras last), keeping a column when it is not in the span of those kept before (QR
       without pivoting); dependent parameters are thus regrouped into parameters of bodies
       nearer the base, as in Khalil's symbolic regrouping (if rounding made the greedy choice
       disagree with the rank, the pivoted choice is used);
    3. the regrouping coefficients ``Y_d = Y_b B`` by least squares; entries below
       ``tol`` (relative) are zeroed. ``K[:, independent] = 1``, ``K[:, dependent] = B``.

    The result is cached per model and arguments.

    >>> import screwdyn
    >>> from screwdyn.inertia import point_mass
    >>> b = screwdyn.ModelBuilder("pendulum")
    >>> _ = b.add_body("link", "base", "joint", "revolute", axis=(0, 1, 0), inertial=point_mass(2.0, [0, 0, -0.5]))
    >>> base_parameters(b.build(), viscous=True).names
    ('mcx_link', 'mcz_link', 'Iyy_link', 'fv_joint')
    """
    check_model(model)
    key = (bool(armature), bool(viscous), bool(coulomb), samples, seed, tol)
    cache = _BASE_CACHE.setdefault(model, {})
    if key in cache:
        return cache[key]
    names = parameter_names(model, armature=armature, viscous=viscous, coulomb=coulomb)
    p = len(names)
    n = model.n
    count = samples if samples is not None else max(30, -(-3 * p // n))
    rng = np.random.default_rng(seed)
    q, qd, qdd = _sample_states(model, rng, count)
    Y = regressor(model, q, qd, qdd, armature=armature, viscous=viscous, coulomb=coulomb).reshape(-1, p)
    norms = np.linalg.norm(Y, axis=0)
    zero = norms <= tol * max(norms.max(initial=0.0), 1e-300)
    live = np.flatnonzero(~zero)
    Ys = Y[:, live] / norms[live]
    _, Rp, perm = scipy.linalg.qr(Ys, mode="economic", pivoting=True)
    diag = np.abs(np.diag(Rp))
    rank = int(np.sum(diag > tol * diag[0])) if diag.size else 0
    R0 = scipy.linalg.qr(Ys, mode="r")[0]
    d0 = np.abs(np.diag(R0))
    keep = np.flatnonzero(d0 > np.sqrt(tol) * 1e-2)  # unit columns: |R_kk| is the distance to the span
    if len(keep) != rank:
        keep = np.sort(perm[:rank])
    indep = live[keep]
    dep = np.setdiff1d(live, indep)
    B = np.linalg.lstsq(Y[:, indep], Y[:, dep], rcond=None)[0] if dep.size else np.zeros((rank, 0))
    scale = norms[dep][None, :] / norms[indep][:, None] if dep.size else B
    B = np.where(np.abs(B) <= tol * np.maximum(scale, 1e-300) * 1e2, 0.0, B)
    K = np.zeros((rank, p))
    K[np.arange(rank), indep] = 1.0
    K[:, dep] = B
    base_names = tuple(_combo_name(names, indep[k], B[k], dep) for k in range(rank))
    bp = BaseParameters(base_names, K, indep, np.flatnonzero(zero), tuple(names), bool(armature), bool(viscous),
                        bool(coulomb))
    cache[key] = bp
    return bp


def base_regressor(model: Model, q, qd, qdd, *, base: BaseParameters | None = None, armature=False, viscous=False,
                   coulomb=False) -> np.ndarray:
    """The base regressor ``Y_b (..., n, r)``: ``tau = Y_b beta``, ``beta = base.K pi``.
    ``base`` defaults to ``base_parameters(model, armature=..., viscous=..., coulomb=...)``;
    when given, its own flags are used."""
    if base is None:
        base = base_parameters(model, armature=armature, viscous=viscous, coulomb=coulomb)
    return base.reduce(regressor(model, q, qd, qdd, **base.flags))
