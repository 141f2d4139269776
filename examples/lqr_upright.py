"""LQR that holds the 2R arm upright, designed on screwdyn.linearize and checked in simulation.

1. the upright pose ``q* = (pi/2, 0)`` of the bundled ``planar_2r`` arm (both links pointing up:
   its joints turn about -y, gravity is along -z) is an equilibrium, and an unstable one:
   ``linearize`` about it (with ``tau`` left out, the torque that holds the state: zero here)
   gives the continuous pair ``(A, B)`` of ``d/dt dx = A dx + B dtau``, and ``A`` has an
   eigenvalue with a positive real part;
2. ``scipy.linalg.solve_continuous_are`` gives the LQR gain ``K = R^-1 B^T P`` for state and
   torque weights ``Q``, ``R``; ``A - B K`` is stable;
3. ``screwdyn.simulate`` runs the nonlinear arm under ``tau = tau* - K (x - x*)`` from a
   perturbed state (20 and -30 degrees off): it returns to ``x*``; without the controller the same
   start falls. The figure shows both.

Run::

    python examples/lqr_upright.py --plot lqr_upright.png
"""
from __future__ import annotations

import argparse

import numpy as np
from scipy.linalg import solve_continuous_are

import screwdyn
from screwdyn import models


def lqr_gain(model, q_star, Q, R):
    """``(K, tau*, A, B)``: the LQR gain about the equilibrium ``(q*, 0)`` held by ``tau*``."""
    n = model.n
    tau_star = screwdyn.inverse_dynamics(model, q_star, np.zeros(n), np.zeros(n))   # what linearize holds
    A, B = screwdyn.linearize(model, q_star, np.zeros(n))
    P = solve_continuous_are(A, B, Q, R)
    return np.linalg.solve(R, B.T @ P), tau_star, A, B


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--plot", default="lqr_upright.png", help="PNG of the closed and open loop (none: '')")
    p.add_argument("--seconds", type=float, default=6.0, help="simulated time [s]")
    args = p.parse_args(argv)

    arm = models.load("planar_2r")
    n = arm.n
    q_star = np.array([np.pi / 2, 0.0])
    Q = np.diag([100.0, 100.0, 1.0, 1.0])
    R = np.eye(n)
    K, tau_star, A, B = lqr_gain(arm, q_star, Q, R)
    open_loop = np.linalg.eigvals(A).real.max()
    closed_loop = np.linalg.eigvals(A - B @ K).real.max()
    print(f"upright 2R arm: largest real part of an eigenvalue, open loop {open_loop:.3f} 1/s, "
          f"with LQR {closed_loop:.3f} 1/s")
    print("K =", np.array2string(K, precision=3))

    x_star = np.concatenate([q_star, np.zeros(n)])

    def lqr(t, q, qd):
        return tau_star - K @ (np.concatenate([q, qd]) - x_star)

    q0 = q_star + np.radians([20.0, -30.0])
    held = screwdyn.simulate(arm, q0, np.zeros(n), duration=args.seconds, dt=1e-3, tau=lqr, friction=False)
    fallen = screwdyn.simulate(arm, q0, np.zeros(n), duration=args.seconds, dt=1e-3, tau=tau_star, friction=False)
    error = np.abs(np.concatenate([held.q[-1], held.qd[-1]]) - x_star).max()
    peak = np.abs([lqr(t, q, qd) for t, q, qd in zip(held.t, held.q, held.qd)]).max()
    drop = np.degrees(np.abs(fallen.q - q_star)).max()
    print(f"from 20 and -30 degrees off upright: after {args.seconds:g} s the LQR leaves |x - x*| = {error:.1e} "
          f"(peak torque {peak:.1f} N m); without it the arm falls ({drop:.0f} degrees from upright)")
    assert open_loop > 0 and closed_loop < 0 and error < 1e-5 and drop > 90

    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        for ax, traj, title in ((axes[0], held, "LQR from linearize: held upright"),
                                (axes[1], fallen, "constant torque tau* only: falls")):
            for i, name in enumerate(arm.joint_names):
                wrapped = np.angle(np.exp(1j * (traj.q[:, i] - q_star[i])))     # in (-180, 180] degrees
                wrapped[1:][np.abs(np.diff(wrapped)) > np.pi] = np.nan         # no line across a wrap
                ax.plot(traj.t, np.degrees(wrapped), label=f"{name} - q*")
            ax.axhline(0.0, color="k", lw=0.6)
            ax.set_title(title)
            ax.set_xlabel("t [s]")
            ax.set_ylabel("angle from upright [deg]")
        axes[0].legend()
        axes[1].set_ylim(-185, 185)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")
    return error


if __name__ == "__main__":
    main()
