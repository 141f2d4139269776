"""Forward simulation: integrate ``M(q) qdd + h(q, qd) = tau + J^T F_ext - tau_friction + tau_limit``
in time, one rollout or a batch of them.

The state is ``x = (q, qd)`` and the vector field is (docs/theory.md §13, eq. (13.1))::

    xdot = (qd, FD(q, qd, sat(tau(t, q, qd)) - tau_f(qd) + tau_lim, F_ext(t, q, qd)))

with ``FD`` :func:`screwdyn.forward_dynamics`. Integrators:

``"euler"``
    Explicit Euler, exactly Modern Robotics' ``EulerStep`` (eq. (13.2): ``x_{k+1} = x_k + dt f(x_k)``)::

        q_{k+1}  = q_k  + dt qd_k
        qd_{k+1} = qd_k + dt qdd_k

    First order; energy grows (it is not symplectic).
``"semi_implicit_euler"``
    Symplectic (semi-implicit) Euler: ``qd_{k+1} = qd_k + dt qdd_k``, then ``q_{k+1} = q_k + dt qd_{k+1}``.
    First order, but energy stays bounded (it oscillates) over long runs.
``"rk4"``
    The classical fourth-order Runge-Kutta method on ``x``. The default.
``"RK45"``, ``"DOP853"``, ``"Radau"``
    SciPy's adaptive :func:`scipy.integrate.solve_ivp` (Dormand-Prince 5(4), 8(5,3), and the
    implicit Radau IIA of order 5 for stiff problems such as large Coulomb friction), with
    tolerances ``rtol``, ``atol``; the output is sampled every ``dt``.

**Batches.** ``q0 (..., nq)`` and ``qd0 (..., nv)`` with leading axes run one rollout per
state, all together: the fixed-step integrators step every rollout through the compiled rollout
kernel (:mod:`screwdyn.algorithms.rollout`: ``L`` rollouts side by side through the ABA kernel,
over numba's threads), whose loop over the steps is compiled too. A batch gives the same numbers
as its rollouts run one at a time, bit for bit. The adaptive integrators run a batch one rollout
after another (a loop over SciPy's solver). A rollout that diverges is reported by its index
(:class:`SimulationWarning`) and its samples from then on are NaN; the others run to the end.
With ``q0`` (or ``qd0``, or ``tau`` per rollout) a Dask array chunked along the batch, each chunk
of rollouts is one ``simulate`` call where Dask's scheduler runs it (a cluster's workers), and the
trajectory holds Dask arrays, lazily (``info["diverged"]``: a boolean Dask array of the batch)::

    traj = simulate(panda, da.from_array(Q0, chunks=10_000), None, 2.0)   # on a dask.distributed Client
    q_end = traj.q[:, -1].compute()

Torques and external wrenches may be given as

* ``None``: zero (a passive robot);
* a constant: ``tau`` ``(n,)`` or a scalar; ``f_ext`` ``(nb, 6)`` (wrenches ``(n, f)`` on each of the
  ``nb = model.nbodies`` bodies in its own frame, as :func:`screwdyn.inverse_dynamics` takes them;
  ``nb == n`` without free-flyer or spherical joints) or a dict ``{link_or_frame: wrench (6,) in that
  frame}``;
* an array per step: ``tau`` ``(steps, n)`` (or ``(steps + 1, n)``), ``f_ext`` ``(steps, nb, 6)`` or a
  dict of ``(steps, 6)`` arrays, held constant over each step (zero-order hold), the same for every
  rollout of a batch;
* per rollout: ``tau`` ``(..., steps, n)`` (or ``(..., 1, n)``: constant), the leading axes those of
  the batch; ``f_ext`` ``(..., steps, nb, 6)`` likewise;
* a callable ``tau(t, q, qd) -> (n,)`` (a controller: see :mod:`screwdyn.control`), or
  ``f_ext(t, q, qd) -> (nb, 6) or dict``. It is evaluated at every stage of the integrator, with the
  whole batch at once (``q (B, nq)``, ``qd (B, nv)``, flattened; it may answer ``(B, n)`` or
  ``(n,)``); with ``hold=True``, once per step at its start and held over the step (a digital
  controller at ``1 / dt``, as MuJoCo applies its controls), which keeps the fixed-step loop compiled.

Joint friction (``friction=True``, the default) is the model's ``damping qd + friction sign(qd)``
(:func:`screwdyn.friction_torques`). The Coulomb term jumps at ``qd = 0``: a robot at rest
chatters at the integrator's precision instead of sticking; "Radau" handles the stiffness best.

**Joint limits** (``joint_limits=True``, the default; docs/theory.md eq. (13.7)): a joint beyond its
range ``[q_lower, q_upper]`` by ``x = q - q_lim`` is given the acceleration of a critically damped
spring, as MuJoCo's soft constraints (``solref = (timeconst, dampratio)``, impedance 1)::

    qdd_i = -k x - c qd_i,    k = 1 / (tc zeta)^2,  c = 2 / tc,  tc = max(timeconst, 2 dt)

by a limit torque that pushes it back and never pulls it in (the torques of several joints beyond
their limits solved together by projected Gauss-Seidel on their block of ``M^-1``, whose columns
are ABA calls at the state: FD is affine in the torque). The depth then obeys
``x'' + (2 / tc) x' + x / tc^2 = 0`` whatever the robot's inertia: a joint that meets its limit at
speed ``v`` goes at most ``v tc / e`` beyond it (0.007 rad at 10 rad/s) and returns to it.
Defaults (:class:`JointLimits`): ``timeconst = 0.002 s`` (the stiffest the clamp allows at
``dt = 1 ms``; MuJoCo's default is 0.02 s), ``dampratio = 1``; ``JointLimits(stiffness=k,
damping=c)`` sets ``k`` [1/s^2] and ``c`` [1/s] directly; ``joint_limits=False`` switches the limits
off. A joint beyond a limit costs one more ABA call per evaluation. Velocity and effort limits are
not enforced: a rollout that exceeds them is reported (:class:`LimitWarning`, one line: the joints,
the worst excess, how many rollouts; each joint's figures, times and rollouts in
``Trajectory.info["limits"]`` and ``Trajectory.limit_report()``); ``saturate=True`` clips the applied torque to the
effort limit, ``|tau_i| <= model.effort_limit[i]``.

**Constraints** (``constraints=``, and a model's own ``model.constraints``, docs/theory.md §15.9):
contacts welded to the world, closed loops and couplings, held as bilateral constraints. The
fixed-step integrators then run the constrained rollouts (:mod:`screwdyn.algorithms.constrained_rollout`):
each stage the constrained forward dynamics (:func:`screwdyn.constrained_forward_dynamics`), and
after each step the state projected back onto the constraints in the metric of ``M`` (a
Gauss-Newton step on the position error, then the velocity's projection: an inelastic impulse),
so that loops stay closed to about the square of a step's error. ``Trajectory.info["constraints"]``
holds each rollout's largest position error and constraint velocity over its samples. Not with
the adaptive integrators, ``method="crba"``, enforced joint limits, or callables evaluated at
every stage (pass ``hold=True``): those are refused by name.

The package's parts: :mod:`.rollouts` (``simulate``: checks the arguments, runs the rollouts,
gathers the trajectory; on Dask chunk by chunk), :mod:`.integrators` (the fixed-step integrators,
compiled or a stage at a time, and SciPy's adaptive ones), :mod:`.inputs` (the time grid, initial
states, torques and wrenches in the shapes the integrators read), :mod:`.limits` (joint limits
and the table the rollout kernel reads), :mod:`.report` (errors, warnings and the limits report),
:mod:`.trajectory` (:class:`Trajectory`).
"""
from .integrators import ADAPTIVE, FIXED_STEP, IMPLICIT, INTEGRATORS, SERIAL_BELOW  # noqa: F401
from .limits import JointLimits, _limit_table, _watch  # noqa: F401  (the rollout kernel's tests compare with these)
from .report import LimitWarning, SimulationError, SimulationWarning
from .rollouts import ProgressBar, simulate
from .contacts import ContactRecord, ContactSettings, StepResult, step
from .trajectory import Trajectory

__all__ = ["simulate", "step", "Trajectory", "ContactSettings", "ContactRecord", "StepResult", "JointLimits",
           "SimulationError", "SimulationWarning", "LimitWarning", "INTEGRATORS", "ProgressBar"]
