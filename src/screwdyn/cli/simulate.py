"""``simulate``: a robot in time from its home pose (by default the Panda under computed-torque
control), with plots, animations, files and the browser viewer."""
from __future__ import annotations

import math
import sys
import warnings

import numpy as np

from .. import models
from .common import CLIError, _floating_option, _fmt, _geometry_option, _load, _view_options, parse_vector
from .views import _serve


def _default_target(model, q0):
    """``q0`` moved by +0.5, -0.46, +0.42, ... rad (0.1 m for a prismatic joint), within the limits:
    every joint moves, each by its own amount."""
    i = np.arange(model.n)
    step = np.where(model.joint_type == 0, 0.5, 0.1) * (-1.0) ** i * (1 - 0.08 * i)
    return np.clip(q0 + step, model.q_lower, model.q_upper)


def _home(model, spec):
    """The bundled robot's home configuration for ``model``: as given, or, for the robot loaded with
    ``--floating-base``, its joint angles at the neutral base pose."""
    q = models.home(spec)
    if len(q) == model.nq:
        return q
    one = model.nqs == 1
    if len(q) != np.count_nonzero(one):
        raise CLIError(f"{spec}: its home configuration has {len(q)} entries, the model {model.nq}; give --q0")
    from ..configuration import neutral

    out = neutral(model)
    out[model.idx_qs[one]] = q
    return out


def _into_limits(model, q0):
    """``q0`` with each revolute joint outside its limits turned by whole turns into them where
    that fits (Corke's Puma 'qn' has q3 = pi, its range [-225, 45] deg): the same pose. (A
    free-flyer's or spherical joint's entries are left as they are.)"""
    q0 = np.array(q0, dtype=float)
    revolute = model.joint_type == 0
    idx = model.idx_qs[revolute]
    x, lo, hi = q0[idx], model.q_lower[idx], model.q_upper[idx]
    turns = np.ceil((lo - x) / (2 * np.pi))
    moved = x + 2 * np.pi * np.where(np.isfinite(turns), turns, 0.0)
    q0[idx] = np.where(((x < lo) | (x > hi)) & (moved <= hi), moved, x)
    return q0


def _environment(args, model):
    """The environment of ``--ground`` (a plane at that height, the model file's floor added), the
    model file's (an MJCF's floor) without it, or None."""
    import screwdyn
    if args.ground is None:
        return model.environment
    return screwdyn.Environment(model.environment, screwdyn.Ground(height=args.ground, friction=args.mu))


def _stand(model, q0, args):
    """The ``stand`` controller: a PD on a floating robot's actuated joints holding q0 (gains
    ``--kp``, ``--kd`` per unit of each joint's inertia at q0, defaults 2000 and 40), the
    free-flyer's rows unactuated: ``tau = Kp (q0 - q) - Kd qd`` on the joints."""
    import screwdyn
    kp = parse_vector(args.kp if args.kp is not None else "2000", model.n, "--kp")
    kd = parse_vector(args.kd if args.kd is not None else "40", model.n, "--kd")
    joints = model.nvs == 1
    rows, cols = model.idx_vs[joints], model.idx_qs[joints]
    inertia = np.diag(screwdyn.mass_matrix(model, q0))[rows]
    Kp, Kd, target = kp[rows] * inertia, kd[rows] * inertia, q0[cols]

    def stand(t, q, qd):
        tau = np.zeros(np.shape(qd))
        tau[..., rows] = Kp * (target - q[..., cols]) - Kd * qd[..., rows]
        return tau
    return stand, "standing: PD on the joints to q0, the base unactuated"


def cmd_simulate(args):
    import screwdyn
    from .. import control, plot, sim
    from ..trajectory import JointTrajectory

    spec = args.model or "panda"
    model = _load(args, spec)
    if args.gravity is not None:
        model = model.with_gravity(parse_vector(args.gravity, 3, "--gravity"))
    if args.q0 is not None:
        q0 = parse_vector(args.q0, model.nq, "--q0")
    elif spec in models.names():
        q0 = _into_limits(model, _home(model, spec))
    else:   # mid-range where a joint has limits; else its neutral value (zero, an identity quaternion)
        q0 = np.where(np.isfinite(model.q_lower) & np.isfinite(model.q_upper),
                      0.5 * (np.nan_to_num(model.q_lower) + np.nan_to_num(model.q_upper)), screwdyn.neutral(model))
    qd0 = np.zeros(model.n) if args.qd0 is None else parse_vector(args.qd0, model.n, "--qd0")
    friction = not args.no_friction
    if args.tau is not None and args.controller not in (None, "none"):
        raise CLIError("give either --tau or --controller, not both")
    floating = model.nq != model.nv
    environment = _environment(args, model)
    if floating and args.controller not in (None, "none", "stand"):
        raise CLIError(f"--controller {args.controller}: the controllers drive every degree of freedom, and "
                       f"{model.name}'s free-flyer or spherical joints have no actuator: simulate it passive, "
                       "give --tau, or, on the ground (--ground), --controller stand")
    if args.controller == "stand" and (not floating or environment is None):
        raise CLIError("--controller stand holds a floating robot's joints at q0 while it stands on the ground: "
                       "it needs a floating robot and --ground (or a model file with a floor)")
    controller = args.controller or ("none" if args.tau is not None else
                                     "stand" if floating and environment is not None else
                                     "none" if floating else "computed-torque")
    what = "passive (tau = 0)"
    tau = reference = None
    if args.tau is not None:
        tau = parse_vector(args.tau, model.n, "--tau")
        what = f"constant tau = {_fmt(tau, 4)}"
    elif controller == "stand":
        tau, what = _stand(model, q0, args)
    elif controller != "none":
        target = _default_target(model, q0) if args.target is None else parse_vector(args.target, model.n, "--target")
        kp = parse_vector(args.kp if args.kp is not None else "100", model.n, "--kp")
        kd = parse_vector(args.kd if args.kd is not None else "20", model.n, "--kd")
        if controller == "gravity":
            tau = control.gravity_compensation(model, friction=friction)
            what = "gravity compensation tau = g(q)"
        elif controller == "pd":
            Mdiag = np.diag(screwdyn.mass_matrix(model, q0))
            tau = control.gravity_compensation_pd(model, target, kp * Mdiag, kd * Mdiag, friction=friction)
            what = f"PD + gravity compensation to q = {_fmt(target, 4)}"
        else:
            move = args.move_time if args.move_time is not None else 0.8 * args.duration
            ref = reference = JointTrajectory(q0, target, move, "quintic")
            tau = control.computed_torque_pd(model, ref, kp, kd, friction=friction)
            what = f"computed torque along a quintic to q = {_fmt(target, 4)} in {move:g} s"
    steps = math.ceil(args.duration / args.dt) if args.dt > 0 else 0
    progress = args.progress or (not args.quiet and sys.stderr.isatty() and steps * model.n > 20000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sim.LimitWarning)   # said below, one line each
        traj = sim.simulate(model, q0, qd0, args.duration, args.dt, tau=tau, integrator=args.integrator,
                            friction=friction, joint_limits=not args.no_limits, saturate=args.saturate,
                            progress=progress, environment=environment if environment is not None else False,
                            hold=controller == "stand")
    if not args.quiet:
        E = traj.total_energy
        dofs = f"{model.n} joints" if model.nq == model.nv else f"{model.n} degrees of freedom ({model.nbodies} joints)"
        print(f"{model.name}: {dofs}, {traj.t[-1]:g} s with {traj.integrator} "
              f"(dt = {args.dt:g} s, {len(traj)} samples), friction {'on' if friction else 'off'}, "
              f"joint limits {'off' if args.no_limits else 'on'}")
        print(f"  {what}")
        print(f"  wall time {traj.info['wall_time']:.3g} s ({traj.info['nfev']} dynamics evaluations)")
        print(f"  energy: start {E[0]:.6g} J, end {E[-1]:.6g} J (change {E[-1] - E[0]:+.4g} J)")
        print(f"  final q = {_fmt(traj.q[-1], 4)}")
        if traj.contacts is not None:
            weight = float(np.sum(model.mass) * np.linalg.norm(model.gravity))
            force = traj.contacts.total_force()[-1]
            print(f"  contacts at the end: {int(traj.contacts.count[-1])}, carrying {_fmt(force, 4)} N (the robot "
                  f"weighs {weight:.4g} N); solver: {traj.solver['iterations'].mean():.2f} iterations a step, largest "
                  f"residual {traj.solver['residual'].max():.2g} m/s")
        elif floating:
            print("  nothing stops the fall: no ground (pass --ground to stand it on the ground at z = 0)")
        beyond = max(0.0, float(np.max(np.maximum(traj.q - model.q_upper, model.q_lower - traj.q))))
        print(f"  furthest beyond a position limit: {beyond:.3g} (rad or m)")
        for line in traj.limit_report():
            if " position " not in line or args.no_limits:
                print(f"  limit exceeded: {line}")
    written = []
    if args.csv:
        traj.to_csv(args.csv)
        written.append(args.csv)
    if args.npz:
        traj.to_npz(args.npz)
        written.append(args.npz)
    if args.plot:
        plot.plot_trajectory(traj, args.plot, reference=reference)
        written.append(args.plot)
    if args.animate:
        from ..viz import animate
        animate(model, traj, args.animate, fps=args.fps)
        written.append(args.animate)
    if not args.quiet:
        for w in written:
            print(f"wrote {w}")
    if args.view:
        _serve(model, traj, args)
    return 0


def add_simulate_command(add):
    """The parser of simulate."""
    from .. import sim

    sp = add("simulate", "simulate a robot in time; plot, animate, save",
             epilog="Without MODEL: panda, from its 'ready' pose, tracking a quintic move to --target "
                    "under computed-torque control, with its published joint friction and its joint limits. "
                    "--controller none lets it fall against its limits. Gains --kp/--kd are per unit inertia "
                    "(1/s^2, 1/s): computed torque uses them as they are, PD multiplies them by diag M(q0).")
    sp.add_argument("model", metavar="MODEL", nargs="?", default=None, help="robot (default: panda)")
    sp.add_argument("--duration", type=float, default=3.0, help="simulated time [s] (default 3)")
    sp.add_argument("--dt", type=float, default=1e-3, help="time step / sampling period [s] (default 0.001)")
    sp.add_argument("--integrator", default=None, choices=sim.INTEGRATORS,
                    help="integrator (default rk4; semi_implicit_euler, the only one, with contacts)")
    sp.add_argument("--q0", metavar="V", help="initial q (default: the bundled robot's home pose, "
                                              "else the middle of the joint limits)")
    sp.add_argument("--qd0", metavar="V", help="initial qd (default zeros)")
    sp.add_argument("--tau", metavar="V", help="constant joint torques (default: none)")
    sp.add_argument("--controller", default=None, choices=("none", "gravity", "pd", "computed-torque", "stand"),
                    help="none (passive), gravity (hold), pd (PD + gravity compensation to --target), "
                         "computed-torque (track a quintic from q0 to --target; the default without --tau), "
                         "stand (a floating robot on --ground: PD on its joints to q0)")
    sp.add_argument("--target", metavar="V", help="controller target (default q0 + 0.5, -0.46, 0.42, ... rad (0.1 m), within limits)")
    sp.add_argument("--move-time", type=float, default=None, help="duration of the quintic move [s] "
                                                                  "(default 0.8 x duration)")
    sp.add_argument("--kp", default=None, metavar="V", help="stiffness per unit inertia [1/s^2] (default 100; "
                                                             "2000 for --controller stand)")
    sp.add_argument("--kd", default=None, metavar="V", help="damping per unit inertia [1/s] (default 20; 40 for "
                                                             "--controller stand)")
    sp.add_argument("--ground", type=float, nargs="?", const=0.0, default=None, metavar="Z",
                    help="simulate with contacts on a ground plane at height Z (default 0): the robot's collision "
                         "geometry against it, rigid contacts with Coulomb friction; a floating robot then stands "
                         "under --controller stand (the default there)")
    sp.add_argument("--mu", type=float, default=1.0, help="the ground's friction coefficient (default 1)")
    sp.add_argument("--gravity", metavar="V", help="gravity vector [m/s^2] (default: the model's)")
    sp.add_argument("--no-friction", action="store_true", help="ignore the model's joint friction")
    sp.add_argument("--no-limits", action="store_true", help="do not enforce the joint position limits")
    sp.add_argument("--saturate", action="store_true", help="clip the applied torques to the effort limits")
    sp.add_argument("--plot", metavar="PNG", help="save q, qd, tau and energies against time")
    sp.add_argument("--animate", metavar="GIF", help="save a video of the robot (.gif, or .mp4 with screwdyn[render])")
    sp.add_argument("--fps", type=int, default=25, help="animation frames per second (default 25)")
    sp.add_argument("--csv", metavar="CSV", help="save the trajectory as CSV")
    sp.add_argument("--npz", metavar="NPZ", help="save the trajectory as NumPy .npz")
    sp.add_argument("--progress", action="store_true", help="always show a progress bar")
    sp.add_argument("--quiet", action="store_true", help="print nothing but errors")
    _floating_option(sp)
    sp.add_argument("--view", action="store_true", help="then show the motion in a web browser (serves until "
                                                        "Ctrl+C; needs screwdyn[viewer])")
    _view_options(sp)
    _geometry_option(sp)
    sp.set_defaults(func=cmd_simulate)
