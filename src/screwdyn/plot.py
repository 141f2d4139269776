"""Pictures: time plots of a simulation or of identified torques, and the robot as a 3D stick
figure (still or animated).

Everything here draws on :class:`matplotlib.figure.Figure` objects with the Agg canvas, never
through ``pyplot``: it works without a display and does not touch the user's pyplot state.
The figures display in Jupyter as they are returned.

* :func:`plot_trajectory`: joint positions, velocities, torques and energies against time, in
  one figure.
* :func:`plot_torques`: measured against predicted (or fitted) joint torques, a panel per joint
  with the RMS of their difference, for identification (:mod:`screwdyn.ident`).
* :func:`plot_robot`: the robot at one configuration: a segment from each body's frame origin
  to each child body's origin (the joint frames, from :func:`screwdyn.forward_kinematics`),
  plus segments to the extra frames of the leaf bodies (tool, end-effector).
* :func:`animate`: the stick figure moving along a trajectory, written to GIF (Pillow, which
  comes with matplotlib) or MP4 (needs ffmpeg).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .errors import InputError

__all__ = ["plot_trajectory", "plot_torques", "plot_robot", "animate", "skeleton"]


def _figure(figsize, layout="constrained"):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def _labels(traj):
    return list(traj.joint_names) if traj.joint_names else [f"q{i}" for i in range(traj.n)]


def plot_trajectory(traj, path=None, title=None, dpi=120):
    """One figure of four panels against time: ``q``, ``qd``, ``tau`` and the energies
    (kinetic, potential, total, with the total's drift from its start in the title).

    Returns the :class:`~matplotlib.figure.Figure`; with ``path``, also saves it there
    (the format follows the extension: .png, .pdf, .svg ...).
    """
    names = _labels(traj)
    fig = _figure((11, 7.5))
    axes = fig.subplots(2, 2, sharex=True)
    panels = ((axes[0, 0], traj.q, "joint position q [rad, m]"),
              (axes[0, 1], traj.qd, "joint velocity qd [rad/s, m/s]"),
              (axes[1, 0], traj.tau, "applied torque tau [N m, N]"))
    for ax, data, label in panels:
        for i, jn in enumerate(names):
            ax.plot(traj.t, data[:, i], lw=1.2, label=jn)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0, 0].legend(fontsize="small", ncol=2 if len(names) > 4 else 1, loc="best")
    if not np.any(traj.tau):
        axes[1, 0].text(0.5, 0.5, "no applied torque (passive robot)", transform=axes[1, 0].transAxes,
                        ha="center", va="center", color="0.4")
    ax = axes[1, 1]
    E = traj.total_energy
    ax.plot(traj.t, traj.kinetic_energy, lw=1.2, label="kinetic")
    ax.plot(traj.t, traj.potential_energy, lw=1.2, label="potential")
    ax.plot(traj.t, E, lw=2.0, color="k", label="total")
    ax.set_ylabel("energy [J]")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    ax.set_title(f"total energy change {E[-1] - E[0]:+.4g} J", fontsize="medium")
    for a in axes[1]:
        a.set_xlabel("time t [s]")
    if title is None:
        title = (f"{traj.model_name or 'robot'}: {traj.t[-1]:g} s, "
                 f"{traj.integrator or 'simulation'}, dt = {traj.dt:g} s")
    fig.suptitle(title)
    if path is not None:
        fig.savefig(path, dpi=dpi)
    return fig


def plot_torques(path, model, t, tau_measured, tau_predicted, title="", labels=("measured", "predicted"), dpi=110):
    """One panel per joint: measured and predicted torques ``(N, n)`` against time ``t (N,)``,
    each panel titled with the RMS of their difference. Saves the figure to ``path`` and
    returns it."""
    n = model.n
    names = model.v_names
    cols = 2 if n > 3 else 1
    rows = -(-n // cols)
    fig = _figure((6 * cols, 1.9 * rows + 0.6))
    axes = fig.subplots(rows, cols, sharex=True, squeeze=False)
    for j in range(n):
        ax = axes[j % rows, j // rows]
        ax.plot(t, tau_measured[:, j], lw=0.6, color="0.6", label=labels[0])
        ax.plot(t, tau_predicted[:, j], lw=1.0, color="C3", label=labels[1])
        rms = np.sqrt(np.mean((tau_measured[:, j] - tau_predicted[:, j]) ** 2))
        ax.set_ylabel(f"{names[j]}\n[N m]", fontsize=8)
        ax.set_title(f"RMS error {rms:.3g}", fontsize=8, loc="right")
        ax.tick_params(labelsize=7)
    for k in range(n, rows * cols):
        axes[k % rows, k // rows].axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("t [s]")
    axes[0, 0].legend(fontsize=7, loc="upper left")
    if title:
        fig.suptitle(title)
    fig.savefig(path, dpi=dpi)
    return fig


def skeleton(model):
    """The stick figure's segments as pairs of frame indices into ``model.frame_names``:
    parent body origin -> body origin for every body, and leaf body -> each other frame it
    carries (tool, end-effector, merged links)."""
    body_frame = [model.frame_index(name) for name in model.link_names]
    base = model.frame_index(model.base_name)
    pairs = []
    for i in range(model.nbodies):
        p = model.parent[i]
        if p < 0 and model.nvs[i] == 6:
            continue   # a free-flyer: no segment from the world's origin to the floating body
        pairs.append((base if p < 0 else body_frame[p], body_frame[i]))
    has_child = np.zeros(model.nbodies, dtype=bool)
    has_child[model.parent[model.parent >= 0]] = True
    bodies = set(body_frame)
    for k, b in enumerate(model.frame_body):
        if b >= 0 and not has_child[b] and k not in bodies:
            if np.linalg.norm(model.frame_pose[k][:3, 3]) > 1e-9:
                pairs.append((body_frame[b], k))
    return pairs


def _positions(model, q):
    """Frame origins ``(..., k, 3)`` at configurations ``q`` ``(..., nq)``."""
    import screwdyn
    q = np.asarray(q, dtype=float)
    if q.shape[-1:] != (model.nq,):
        raise InputError(f"q must have shape ({model.nq},) or (N, {model.nq}), got {q.shape}")
    T = screwdyn.forward_kinematics(model, q)
    return np.asarray(T)[..., :3, 3]


def _limits(points):
    """Equal-aspect cube around ``points`` ``(m, 3)``."""
    lo, hi = points.min(axis=0), points.max(axis=0)
    centre = 0.5 * (lo + hi)
    half = 0.5 * max(float((hi - lo).max()), 0.2)
    return [(c - half, c + half) for c in centre]


def _setup_axes(ax, lims, title):
    ax.set_xlim(*lims[0])
    ax.set_ylim(*lims[1])
    ax.set_zlim(*lims[2])
    ax.set_box_aspect((1, 1, 1), zoom=0.95)
    ax.locator_params(nbins=4)      # few tick labels: text is most of a 3D frame's drawing time
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    ax.set_title(title)


def _draw(ax, P, pairs, lines=None):
    """Draw (or update) the stick figure of frame origins ``P`` ``(k, 3)``."""
    segs = [(P[a], P[b]) for a, b in pairs]
    joints = sorted({b for a, b in pairs} | {a for a, b in pairs})
    if lines is None:
        lines = [ax.plot(*np.transpose(s), color="tab:blue", lw=5, solid_capstyle="round")[0] for s in segs]
        dots = ax.plot(*P[joints].T, "o", color="tab:orange", ms=6, mec="k", mew=0.5)[0]
        return lines + [dots]
    for line, s in zip(lines, segs):
        x, y, z = np.transpose(s)
        line.set_data_3d(x, y, z)
    lines[-1].set_data_3d(*P[joints].T)
    return lines


def plot_robot(model, q, path=None, ax=None, title=None, dpi=120, view=(25, -60)):
    """The robot at configuration ``q`` as a 3D stick figure (see :func:`skeleton`); the base
    frame origin is marked with a black square. Returns the figure; saves it to ``path``."""
    pairs = skeleton(model)
    P = _positions(model, q)
    if ax is None:
        fig = _figure((6, 6))
        ax = fig.add_subplot(projection="3d")
    else:
        fig = ax.figure
    pts = np.vstack([P, np.zeros((1, 3))])
    _setup_axes(ax, _limits(pts), title if title is not None else model.name)
    ax.view_init(*view)
    ax.plot([0], [0], [0], "ks", ms=7)
    _draw(ax, P, pairs)
    if path is not None:
        fig.savefig(path, dpi=dpi)
    return fig


def animate(model, traj, path, fps=25, speed=1.0, dpi=80, view=(25, -60), max_frames=600):
    """Write an animation of the stick figure following ``traj`` to ``path`` (``.gif`` with
    Pillow, ``.mp4`` with ffmpeg). ``speed`` > 1 plays faster than real time; at most
    ``max_frames`` frames are drawn. Returns the number of frames written."""
    from matplotlib.animation import FFMpegWriter, PillowWriter

    path = Path(path)
    ext = path.suffix.lower()
    if ext == ".gif":
        writer = PillowWriter(fps=fps)
    elif ext == ".mp4":
        if not FFMpegWriter.isAvailable():
            raise InputError("writing .mp4 needs ffmpeg on the PATH; write a .gif instead")
        writer = FFMpegWriter(fps=fps)
    else:
        raise InputError(f"animation file must end in .gif or .mp4, got {path.name!r}")
    if traj.q.shape[1] != model.n:
        raise InputError(f"the trajectory has {traj.q.shape[1]} joints, the model {model.n}")
    t = np.asarray(traj.t)
    frames_t = np.arange(t[0], t[-1] + 1e-12, speed / fps)
    if len(frames_t) > max_frames:
        frames_t = np.linspace(t[0], t[-1], max_frames)
    idx = np.minimum(np.searchsorted(t, frames_t), len(t) - 1)
    P = _positions(model, traj.q[idx])
    pairs = skeleton(model)
    fig = _figure((6, 6), layout=None)   # a fixed layout: one draw per frame
    ax = fig.add_axes((0.02, 0.02, 0.96, 0.92), projection="3d")
    _setup_axes(ax, _limits(np.vstack([P.reshape(-1, 3), np.zeros((1, 3))])), model.name)
    ax.view_init(*view)
    ax.plot([0], [0], [0], "ks", ms=7)
    artists = _draw(ax, P[0], pairs)
    label = ax.text2D(0.02, 0.95, "", transform=ax.transAxes)

    with writer.saving(fig, str(path), dpi):
        for j in range(len(idx)):
            _draw(ax, P[j], pairs, artists)
            label.set_text(f"t = {t[idx[j]]:.2f} s")
            writer.grab_frame()
    return len(idx)
