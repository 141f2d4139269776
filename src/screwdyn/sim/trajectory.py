"""The result of a simulation: :class:`Trajectory`, arrays over the samples (a batch's axes in
front), with its energies, limits report, views and export (CSV, ``.npz``, pandas).
"""
from __future__ import annotations

import numpy as np

from .._dask import any_dask
from ..errors import InputError
from .report import _report_lines


class Trajectory:
    """A simulated (or sampled) motion: arrays over ``N`` samples of ``n`` joints, with the batch
    axes of the initial states in front for a batch of rollouts.

    Attributes::

        t                 (N,)          time [s]
        q                 (..., N, nq)  joint positions
        qd, qdd           (..., N, nv)  joint velocities, accelerations
        tau               (..., N, nv)  applied joint torques/forces (after saturation; friction and
                                        joint-limit torques not included)
        kinetic_energy    (..., N)      1/2 qd^T M(q) qd [J] (rotor inertia included)
        potential_energy  (..., N)      gravitational potential energy [J] (zero at the base origin)
        total_energy      (..., N)      their sum
        limits            dict of (n,) q_lower, q_upper, velocity, effort: the model's limits (or None)
        info              nfev, wall_time, the limits exceeded ("limits"), diverged rollouts ...
        contacts          a simulation with contacts: each step's contacts and their forces, a
                          :class:`~screwdyn.sim.contacts.ContactRecord` over ``(..., N, K)``
                          (None without contacts, or when not recorded)
        solver            a simulation with contacts: a dict of each step's ``iterations``,
                          ``residual`` [m/s] ``(..., N)``, and (when recorded) ``joint_torques``
                          ``(..., N, 2, nv)`` (joint-limit, dry-friction) and ``constraint_forces``
                          ``(..., N, mb)`` (the bilateral constraints'); sample ``k``'s are those of
                          the step from ``t[k]`` (the last sample's, of a step whose state is not kept)

    ``info["limits"]`` holds what the :class:`~screwdyn.sim.LimitWarning` summarises in one line:
    ``{"position": .., "velocity": .., "effort": .., "joint_limits": bool}``, each kind a dict
    ``{joint: {"max", "limit", "t", "rollouts", "unit"}}`` of the joints that went beyond that limit
    (``max``: the largest ``|qd|``, the largest commanded ``|tau|``, or the depth beyond a position
    limit; ``t``: the first time [s]; ``rollouts``: the flat indices of the rollouts that did; effort
    entries also say whether the torque was ``"saturated"``). :meth:`limit_report` gives it one line
    per joint.

    The energies are computed when first read (from the model that made the trajectory), NaN for
    the samples of a diverged rollout. ``traj[i]`` is rollout ``i`` of a batch.
    """

    def __init__(self, t, q, qd, qdd, tau, kinetic_energy=None, potential_energy=None, joint_names=(),
                 model_name="", integrator="", dt=float("nan"), info=None, limits=None, model=None, contacts=None,
                 solver=None):
        self.t, self.q, self.qd, self.qdd, self.tau = t, q, qd, qdd, tau
        self.contacts, self.solver = contacts, solver
        self._kinetic, self._potential = kinetic_energy, potential_energy
        self.joint_names, self.model_name, self.integrator, self.dt = tuple(joint_names), model_name, integrator, dt
        self.info = {} if info is None else info
        self.limits = limits
        self.model = model

    # ------------------------------------------------------------------ shape
    @property
    def batch_shape(self) -> tuple:
        """The leading axes of a batch (``()`` for one rollout)."""
        return self.q.shape[:-2]

    @property
    def n(self) -> int:
        return self.qd.shape[-1]

    def __len__(self):
        return len(self.t)

    def __repr__(self):
        batch = f"{self.batch_shape} rollouts x " if self.batch_shape else ""
        return (f"Trajectory({self.model_name!r}, {batch}{len(self)} samples, t = {self.t[0]:g}..{self.t[-1]:g} s, "
                f"integrator={self.integrator!r})")

    def __getitem__(self, index) -> Trajectory:
        """Rollout ``index`` of a batch (an integer, or a tuple for several batch axes) as a trajectory."""
        if not self.batch_shape:
            raise InputError("this trajectory is one rollout: there is no member to select")
        index = index if isinstance(index, tuple) else (index,)
        try:
            pick = lambda x: None if x is None else x[index]
            q = self.q[index]
        except (IndexError, TypeError) as e:
            raise InputError(f"rollout index {index} for a batch of shape {self.batch_shape}: {e}") from None
        return Trajectory(self.t, q, pick(self.qd), pick(self.qdd), pick(self.tau), pick(self._kinetic),
                          pick(self._potential), self.joint_names, self.model_name, self.integrator, self.dt,
                          dict(self.info, member=index), self.limits, self.model,
                          None if self.contacts is None else self.contacts.select(index),
                          None if self.solver is None else {k: v[index] for k, v in self.solver.items()})

    @property
    def contact_forces(self):
        """``(..., N, K, 3)``: the force of each recorded contact in the world frame [N] (zero in
        the rows without one), as the viewer and :func:`screwdyn.viz.animate` draw them; None
        without contact records."""
        return None if self.contacts is None else self.contacts.force

    # ------------------------------------------------------------------ energies
    def _energies(self):
        if self._kinetic is None or self._potential is None:
            if self.model is None:
                raise InputError("this trajectory has no energies and no model to compute them from")
            if any_dask(self.q, self.qd):   # lazily, chunk by chunk
                from functools import partial

                from .._dask import map_batches
                self._kinetic, self._potential = map_batches(partial(_energy_samples, self.model), [self.q, self.qd],
                                                             [1, 1], ((), ()), name="screwdyn-energies")
            else:
                self._kinetic, self._potential = _energy_samples(self.model, self.q, self.qd)
        return self._kinetic, self._potential

    @property
    def kinetic_energy(self) -> np.ndarray:
        return self._energies()[0]

    @property
    def potential_energy(self) -> np.ndarray:
        return self._energies()[1]

    @property
    def total_energy(self) -> np.ndarray:
        K, U = self._energies()
        return K + U

    def energy_drift(self, relative=True):
        """``max_t |E(t) - E(0)|``; with ``relative``, divided by the largest kinetic energy
        reached (the energy that actually moved), so that the zero of the potential does not matter.
        A float for one rollout, an array of the batch shape for a batch."""
        E = self.total_energy
        drift = np.max(np.abs(E - E[..., :1]), axis=-1)
        if relative:
            scale = np.max(self.kinetic_energy, axis=-1)
            drift = np.where(scale > 0, drift / np.where(scale > 0, scale, 1.0), drift)
        return float(drift) if drift.ndim == 0 else drift

    # ------------------------------------------------------------------ limits
    def limit_report(self) -> list:
        """The limits exceeded, one line per joint and kind (``info["limits"]``; empty when none was):
        ``"panda_joint4: |qd| up to 13.44 rad/s > velocity limit 2.175, from t = 0.001 s in 10 of 10
        rollouts (0, 1, 2, 3, 4, 5, 6, 7, ...)"``."""
        return _report_lines(self.info.get("limits", {}), self.batch_shape)

    def view(self, model=None, **options):
        """Show the motion in a web browser with a time slider and play button (:func:`screwdyn.view`;
        ``options`` as there). ``model``: by default the one :func:`simulate` was given. Returns the
        running :class:`~screwdyn.viz.Viewer`."""
        model = self.model if model is None else model
        if model is None:
            raise InputError("Trajectory.view: this trajectory does not know its model (it was not made by "
                             "simulate); pass it: traj.view(model)")
        from ..viz.viewer import view

        return view(model, self, **options)

    # ------------------------------------------------------------------ export
    def columns(self) -> dict:
        """Column name -> 1-D array: ``t``, ``q_<joint>``, ``qd_<joint>``, ``qdd_<joint>``,
        ``tau_<joint>``, ``kinetic_energy``, ``potential_energy``, ``total_energy``; for a batch, a
        ``rollout`` column (the flat index of the rollout) first, the rollouts one after another."""
        names = self.joint_names or tuple(f"q{i}" for i in range(self.n))
        N = len(self.t)
        B = int(np.prod(self.batch_shape, dtype=int))
        cols = {}
        if self.batch_shape:
            cols["rollout"] = np.repeat(np.arange(B), N)
        cols["t"] = np.tile(self.t, B)
        q_names = names
        if self.q.shape[-1] != len(names):   # quaternions in q: a name per entry (Model.q_names)
            q_names = self.model.q_names if self.model is not None else tuple(f"q{i}" for i in range(self.q.shape[-1]))
        for key in ("q", "qd", "qdd", "tau"):
            arr = getattr(self, key).reshape(B * N, -1)
            for i, jn in enumerate(q_names if key == "q" else names):
                cols[f"{key}_{jn}"] = arr[:, i]
        cols["kinetic_energy"] = self.kinetic_energy.reshape(-1)
        cols["potential_energy"] = self.potential_energy.reshape(-1)
        cols["total_energy"] = self.total_energy.reshape(-1)
        return cols

    def to_csv(self, path):
        """Write the columns of :meth:`columns` as CSV with a header line."""
        cols = self.columns()
        data = np.column_stack(list(cols.values()))
        np.savetxt(path, data, delimiter=",", header=",".join(cols), comments="", fmt="%.17g")

    def to_npz(self, path):
        """Write the arrays (batch axes kept) and metadata to a NumPy ``.npz`` file (read back with
        :meth:`from_npz`)."""
        limits = {f"limit_{k}": v for k, v in (self.limits or {}).items()}
        np.savez(path, t=self.t, q=self.q, qd=self.qd, qdd=self.qdd, tau=self.tau,
                 kinetic_energy=self.kinetic_energy, potential_energy=self.potential_energy,
                 joint_names=np.array(self.joint_names, dtype=str), model_name=np.array(self.model_name),
                 integrator=np.array(self.integrator), dt=np.array(self.dt), **limits)

    @classmethod
    def from_npz(cls, path) -> Trajectory:
        with np.load(path) as z:
            limits = {k[6:]: z[k] for k in z.files if k.startswith("limit_")} or None
            return cls(t=z["t"], q=z["q"], qd=z["qd"], qdd=z["qdd"], tau=z["tau"],
                       kinetic_energy=z["kinetic_energy"], potential_energy=z["potential_energy"],
                       joint_names=tuple(str(s) for s in z["joint_names"]), model_name=str(z["model_name"]),
                       integrator=str(z["integrator"]), dt=float(z["dt"]), limits=limits)

    def to_dataframe(self):
        """A :class:`pandas.DataFrame` of :meth:`columns` indexed by ``t`` (by ``(rollout, t)`` for a
        batch; needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Trajectory.to_dataframe needs pandas (pip install pandas); "
                              "to_csv and to_npz work without it") from None
        return pd.DataFrame(self.columns()).set_index(["rollout", "t"] if self.batch_shape else "t")


def _energy_samples(model, q, qd):
    """Kinetic and potential energy of samples ``(..., nq)``, ``(..., nv)``; NaN where a sample is not finite."""
    from .. import kinetic_energy, potential_energy
    Q, QD = q.reshape(-1, q.shape[-1]), qd.reshape(-1, qd.shape[-1])
    ok = np.isfinite(Q).all(axis=1) & np.isfinite(QD).all(axis=1)
    K, U = np.full(len(Q), np.nan), np.full(len(Q), np.nan)
    if ok.all():
        K[:], U[:] = kinetic_energy(model, Q, QD), potential_energy(model, Q)
    elif ok.any():
        K[ok], U[ok] = kinetic_energy(model, Q[ok], QD[ok]), potential_energy(model, Q[ok])
    return K.reshape(q.shape[:-1]), U.reshape(q.shape[:-1])
