"""Swing-up of the pendulum by iLQR on screwdyn's analytic derivatives.

The bundled ``pendulum`` (a 1 kg link with its centre of mass 0.25 m below the joint, reflected
rotor inertia and viscous damping) hangs at ``q = 0``; the goal is upright, ``q = pi``, at rest,
after ``T`` seconds. Holding it level takes ``m g d = 2.45 N m``; the torque is kept below that by
its cost, so the pendulum has to be pumped up.

The dynamics are the discrete ones of ``screwdyn.simulate(integrator="rk4")``: one classical
Runge-Kutta step of ``dt`` with the torque held over the step (docs/theory.md (13.4)).
iLQR (Li and Todorov 2004) alternates

* a batch linearization along the current trajectory, ``screwdyn.linearize(model, Q, QD, U,
  dt=dt, scheme="rk4")``: the exact Jacobians ``A_k``, ``B_k`` of those steps (all steps in one
  call, from four batched calls of the analytic derivatives, docs/theory.md (14.14));
* a Riccati backward pass for the feedforward ``k_k`` and feedback ``K_k`` of the quadratic cost;
* a forward pass with a line search, ``u_k = U_k + a k_k + K_k (x_k - X_k)``.

At the end ``screwdyn.simulate`` is run on the optimal torques alone (open loop) and lands on the
same trajectory: the derivatives are those of the simulator's own steps.

Run::

    python examples/ilqr_swing_up.py --plot ilqr_swing_up.png
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import screwdyn
from screwdyn import models


def rk4_step(model, q, qd, u, h):
    """One step of docs/theory.md (13.4) with the torque ``u`` held: ``simulate``'s "rk4" step."""
    def f(q, qd):
        return qd, screwdyn.forward_dynamics(model, q, qd, u, friction=True)
    v1, a1 = f(q, qd)
    v2, a2 = f(q + h / 2 * v1, qd + h / 2 * a1)
    v3, a3 = f(q + h / 2 * v2, qd + h / 2 * a2)
    v4, a4 = f(q + h * v3, qd + h * a3)
    return q + h / 6 * (v1 + 2 * v2 + 2 * v3 + v4), qd + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4)


class SwingUp:
    """The optimal-control problem: ``N`` steps of ``h``, cost
    ``sum_k 1/2 (x_k - x_g)^T Wx (x_k - x_g) + 1/2 u_k^T Wu u_k + 1/2 (x_N - x_g)^T Wf (x_N - x_g)``."""

    def __init__(self, model, seconds=3.0, h=0.01):
        self.model, self.h, self.N = model, h, round(seconds / h)
        n = model.n
        self.x0 = np.zeros(2 * n)                                   # hanging at rest
        self.goal = np.concatenate([np.full(n, np.pi), np.zeros(n)])  # upright at rest
        self.Wx = np.diag(np.r_[np.full(n, 0.1), np.full(n, 0.01)]) * h
        self.Wu = np.eye(n) * 3.0 * h
        self.Wf = np.diag(np.r_[np.full(n, 1e3), np.full(n, 1e2)])

    def rollout(self, U, X=None, k=None, K=None, alpha=1.0):
        """States ``(N + 1, 2n)`` and torques ``(N, n)`` of the closed-loop forward pass."""
        n, N = self.model.n, self.N
        Xn, Un = np.empty((N + 1, 2 * n)), np.empty_like(U)
        Xn[0] = self.x0
        for i in range(N):
            u = U[i] if k is None else U[i] + alpha * k[i] + K[i] @ (Xn[i] - X[i])
            Un[i] = u
            q, qd = rk4_step(self.model, Xn[i, :n], Xn[i, n:], u, self.h)
            Xn[i + 1, :n], Xn[i + 1, n:] = q, qd
        return Xn, Un

    def cost(self, X, U):
        E = X - self.goal
        return 0.5 * (np.einsum("ki,ij,kj->", E[:-1], self.Wx, E[:-1]) + np.einsum("ki,ij,kj->", U, self.Wu, U)
                      + E[-1] @ self.Wf @ E[-1])

    def backward(self, X, U, mu):
        """Feedforward ``k (N, n)`` and feedback ``K (N, n, 2n)`` from the linearization along ``(X, U)``."""
        n, N = self.model.n, self.N
        A, B = screwdyn.linearize(self.model, X[:-1, :n], X[:-1, n:], U, dt=self.h, scheme="rk4", friction=True)
        Vx = self.Wf @ (X[-1] - self.goal)
        Vxx = self.Wf.copy()
        k, K = np.empty((N, n)), np.empty((N, n, 2 * n))
        for i in range(N - 1, -1, -1):
            Qx = self.Wx @ (X[i] - self.goal) + A[i].T @ Vx
            Qu = self.Wu @ U[i] + B[i].T @ Vx
            Qxx = self.Wx + A[i].T @ Vxx @ A[i]
            Quu = self.Wu + B[i].T @ Vxx @ B[i] + mu * np.eye(n)
            Qux = B[i].T @ Vxx @ A[i]
            k[i] = -np.linalg.solve(Quu, Qu)
            K[i] = -np.linalg.solve(Quu, Qux)
            Vx = Qx + K[i].T @ Quu @ k[i] + K[i].T @ Qu + Qux.T @ k[i]
            Vxx = Qxx + K[i].T @ Quu @ K[i] + K[i].T @ Qux + Qux.T @ K[i]
            Vxx = 0.5 * (Vxx + Vxx.T)
        return k, K

    def solve(self, iterations=100, tol=1e-4):
        U = np.zeros((self.N, self.model.n))
        X, U = self.rollout(U)
        J = self.cost(X, U)
        history, mu = [J], 1e-6
        for _ in range(iterations):
            k, K = self.backward(X, U, mu)
            for alpha in 0.5 ** np.arange(10):
                Xn, Un = self.rollout(U, X, k, K, alpha)
                Jn = self.cost(Xn, Un)
                if Jn < J:
                    break
            else:
                mu *= 10.0          # no descent: regularize the next backward pass more
                continue
            mu = max(mu / 10.0, 1e-9)
            done = J - Jn < tol * J
            X, U, J = Xn, Un, Jn
            history.append(J)
            if done:
                break
        return X, U, np.array(history)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--plot", default="ilqr_swing_up.png", help="PNG of the swing-up (none: '')")
    p.add_argument("--seconds", type=float, default=3.0, help="time to reach the top [s]")
    p.add_argument("--iterations", type=int, default=100, help="at most this many iLQR iterations")
    args = p.parse_args(argv)

    pendulum = models.load("pendulum")
    problem = SwingUp(pendulum, seconds=args.seconds)
    t0 = time.perf_counter()
    X, U, history = problem.solve(args.iterations)
    elapsed = time.perf_counter() - t0
    n = pendulum.n
    final = np.abs(X[-1] - problem.goal).max()
    hold = 9.81 * float(pendulum.mass[0]) * float(np.linalg.norm(pendulum.com[0]))
    print(f"iLQR: {len(history) - 1} iterations in {elapsed:.2f} s, cost {history[0]:.1f} -> {history[-1]:.3f}; "
          f"final |x - goal| = {final:.1e}, peak torque {np.abs(U).max():.2f} N m (m g d = {hold:.2f} N m)")

    # The optimal torques, open loop, through simulate's own rk4 steps: the same trajectory.
    traj = screwdyn.simulate(pendulum, X[0, :n], X[0, n:], duration=problem.N * problem.h, dt=problem.h, tau=U,
                             integrator="rk4")
    replay = np.abs(np.c_[traj.q, traj.qd] - X).max()
    print(f"simulate(tau=U, integrator='rk4') replays it to {replay:.1e}")
    assert final < 1e-2 and replay < 1e-9 and np.abs(U).max() < hold

    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        t = np.arange(problem.N + 1) * problem.h
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
        axes[0].plot(t, np.degrees(X[:, 0]), label="iLQR")
        axes[0].plot(traj.t, np.degrees(traj.q[:, 0]), "--", label="simulate(tau=U)")
        axes[0].axhline(180.0, color="k", lw=0.6)
        axes[0].set(xlabel="t [s]", ylabel="angle from hanging [deg]", title="swing-up")
        axes[0].legend()
        axes[1].step(t[:-1], U[:, 0], where="post")
        axes[1].axhline(hold, color="r", lw=0.6, ls=":", label="m g d")
        axes[1].axhline(-hold, color="r", lw=0.6, ls=":")
        axes[1].set(xlabel="t [s]", ylabel="torque [N m]", title="optimal torque (held per step)")
        axes[1].legend()
        axes[2].semilogy(history, "o-", ms=3)
        axes[2].set(xlabel="iteration", ylabel="cost", title="iLQR convergence")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")
    return final


if __name__ == "__main__":
    main()
