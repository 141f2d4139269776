"""End-to-end dynamic identification of a robot arm, from excitation to validation.

1. the base (identifiable) parameters of the UR5 with viscous and Coulomb friction;
2. an excitation trajectory: a finite Fourier series optimised for the condition number of the
   stacked base regressor, inside the joint position and velocity limits;
3. "measurements": the torques along it by inverse dynamics (no simulator is needed, the
   motion is prescribed), plus Gaussian torque noise and encoder noise on the positions;
4. identification from positions and torques only (velocities and accelerations by a
   Savitzky-Golay filter), weighted least squares, with standard deviations, then a
   physically consistent estimate;
5. validation on a different trajectory: torque prediction error against the noise level,
   and a figure of measured against predicted torques.

Run::

    python examples/identification.py --plot identification.png [--robot ur5] [--csv data.csv]

With ``--csv`` the measurements are also written in the CSV format that
``screwdyn identify data.csv --model ur5 --friction`` reads, and that command is run on them.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import screwdyn
from screwdyn.cli import ident_cli
from screwdyn.ident import base_parameters, excitation_trajectory, identify, write_csv
from screwdyn.io.urdf import example_robot_data_path, load_urdf
from screwdyn.plot import plot_torques


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--robot", default="ur5", help="example-robot-data robot (default ur5)")
    p.add_argument("--plot", default="identification.png", help="PNG of measured vs predicted validation torques")
    p.add_argument("--seconds", type=float, default=20.0, help="length of each experiment [s]")
    p.add_argument("--rate", type=float, default=200.0, help="sampling rate [Hz]")
    p.add_argument("--noise", type=float, default=0.03, help="torque noise, fraction of each joint's RMS torque")
    p.add_argument("--q-noise", type=float, default=2e-5, help="encoder noise [rad]")
    p.add_argument("--csv", default=None, help="also write the data here and run `screwdyn identify` on it")
    p.add_argument("--harmonics", type=int, default=5, help="Fourier harmonics of the excitation")
    p.add_argument("--iterations", type=int, default=40, help="optimiser iterations for the excitation")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # mimic joints etc. reported by the loader
        model = load_urdf(example_robot_data_path(args.robot))
    n = model.n
    # the URDF has no friction: give the "real" robot some (viscous N m s/rad, Coulomb N m)
    model = model.replace(damping=np.linspace(0.8, 0.1, n), friction=np.linspace(2.0, 0.3, n))
    flags = dict(viscous=True, coulomb=True)

    # 1. base parameters
    base = base_parameters(model, **flags)
    print(f"{model!r}: {len(base.parameter_names)} parameters, {base.rank} base parameters")

    # 2. excitation (optimised) and a validation trajectory (another random start, not optimised)
    t0 = time.perf_counter()
    kw = dict(base=base, harmonics=args.harmonics, samples=60, seed=args.seed)
    excitation = excitation_trajectory(model, maxiter=args.iterations, **kw)
    start = excitation_trajectory(model, maxiter=0, **kw)
    validation = excitation_trajectory(model, base=base, harmonics=4, period=8.0, maxiter=0, seed=args.seed + 1)
    print(f"excitation: cond(Y_b) {start.cond:.1f} (random start) -> {excitation.cond:.1f} (optimised) "
          f"in {time.perf_counter() - t0:.1f} s")

    # 3. measurements: prescribed motion, inverse dynamics, noise
    dt = 1.0 / args.rate
    t = np.arange(0.0, args.seconds, dt)

    def measure(traj):
        q, qd, qdd = traj(t)
        tau = screwdyn.inverse_dynamics(model, q, qd, qdd, friction=True)
        sigma = args.noise * np.sqrt(np.mean(tau**2, axis=0))
        q_measured = q + args.q_noise * rng.normal(size=q.shape)
        return q_measured, tau + sigma * rng.normal(size=tau.shape), sigma, (q, qd, qdd)

    q_m, tau_m, sigma, _ = measure(excitation)
    print("torque noise sigma [N m]: " + ", ".join(f"{s:.3g}" for s in sigma))

    # 4. identification from positions and torques only
    # (near velocity reversals the Coulomb sign from filtered velocities is unreliable: skip those)
    est = identify(model, q_m, None, None, tau_m, t=t, base=base, weights="joint", min_speed=0.02)
    truth = base.of_model(model)
    z = (est.beta - truth) / est.std
    print(est.table(reference=truth))
    print(f"{est.method.upper()}: cond {est.cond:.1f}; fit residual RMS / noise: "
          + ", ".join(f"{r:.3f}" for r in est.rms / sigma))
    print(f"|estimate - true| < 2 std for {np.mean(np.abs(z) < 2):.0%} of the base parameters "
          f"(relative error of beta: {np.linalg.norm(est.beta - truth) / np.linalg.norm(truth):.2e})")
    ok, _ = est.consistency()
    phys = est.physical()
    print(f"least-squares parameters physically consistent (nearest full pi to the URDF's): {ok}; "
          f"consistent estimate: residual cost x{phys.cost_ratio:.6f}, all J_i PSD: {phys.consistent}")

    # 5. validation on another trajectory
    qv_m, tauv_m, sigma_v, (qv, qdv, qddv) = measure(validation)
    pred = est.predict(qv, qdv, qddv)
    pred_phys = screwdyn.inverse_dynamics(phys.model, qv, qdv, qddv, friction=True)
    rms = np.sqrt(np.mean((pred - tauv_m) ** 2, axis=0))
    rms_phys = np.sqrt(np.mean((pred_phys - tauv_m) ** 2, axis=0))
    print("validation RMS error / noise (least squares):  " + ", ".join(f"{r:.3f}" for r in rms / sigma_v))
    print("validation RMS error / noise (consistent):     " + ", ".join(f"{r:.3f}" for r in rms_phys / sigma_v))
    plot_torques(args.plot, model, t, tauv_m, pred, labels=("measured", "predicted"),
                 title=f"{model.name}: validation trajectory, measured vs predicted torque")
    print(f"figure: {args.plot}")

    if args.csv:
        write_csv(args.csv, model, t, q_m, tau_m)
        print(f"\n$ screwdyn identify {args.csv} --model {args.robot} --friction --wls --min-speed 0.02")
        ident_cli([args.csv, "--model", args.robot, "--friction", "--wls", "--min-speed", "0.02"])
    return est, rms / sigma_v


if __name__ == "__main__":
    main()
