"""Pictures: time plots of a simulation or of identified torques, and the robot as a 3D stick
figure (still or animated).

Everything here draws on :class:`matplotlib.figure.Figure` objects with the Agg canvas, never
through ``pyplot``: it works without a display and does not touch the user's pyplot state.
The figures display in Jupyter as they are returned.

* :func:`plot_trajectory`: joint positions (with their limits), velocities, torques and energies
  against time, in one figure; a batch of rollouts as fans (median and percentile bands).
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


_FAN = (5, 25, 50, 75, 95)   # percentiles of a batch's fan: the outer band, the inner band, the median


def _curves(ax, t, data, color, label=None, lw=1.2, ls="-"):
    """One line of ``data (N,)``, or for a batch ``(B, N)`` a fan: the median, and bands between the
    25th and 75th and between the 5th and 95th percentiles (NaN samples of diverged rollouts left out)."""
    if data.ndim == 1:
        ax.plot(t, data, lw=lw, ls=ls, color=color, label=label)
        return
    if np.isnan(data).any():   # (nanpercentile goes column by column in Python: 0.1 s a curve of 2,000 samples)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)     # a time where every rollout diverged
            p05, p25, p50, p75, p95 = np.nanpercentile(data, _FAN, axis=0)
    else:
        p05, p25, p50, p75, p95 = np.percentile(data, _FAN, axis=0)
    ax.fill_between(t, p05, p95, color=color, alpha=0.12, lw=0)
    ax.fill_between(t, p25, p75, color=color, alpha=0.3, lw=0)
    ax.plot(t, p50, lw=lw, ls=ls, color=color, label=label)


def _reference_positions(reference, t, n):
    """``q_d (N, n)`` of a reference (a callable ``t -> (q_d, qd_d, qdd_d)`` or an array ``(N, n)``)."""
    if reference is None:
        return None
    q_d = reference(t)[0] if callable(reference) else reference
    q_d = np.asarray(q_d, dtype=float)
    if q_d.shape != (len(t), n):
        raise InputError(f"the reference must give q_d of shape ({len(t)}, {n}), got {q_d.shape}")
    return q_d


def _strip(ax, t, q, j, lo, hi, color, q_d=None):
    """Joint ``j``'s position against time with its limits: the range beyond each drawn grey and
    edged by a dashed line, the view wide enough to show both limits and the motion."""
    _curves(ax, t, q[..., j], color)
    if q_d is not None:
        ax.plot(t, q_d[:, j], lw=1.0, ls="--", color="k", label="reference")
    finite = [x for x in (lo, hi) if np.isfinite(x)]
    with np.errstate(invalid="ignore"):
        seen = q[..., j][np.isfinite(q[..., j])]
    values = np.concatenate([seen, finite]) if seen.size else np.array(finite or [0.0])
    span = max(float(values.max() - values.min()), 1e-3)
    bottom, top = values.min() - 0.12 * span, values.max() + 0.12 * span
    for limit, edge in ((lo, bottom), (hi, top)):
        if np.isfinite(limit):
            ax.axhspan(min(limit, edge), max(limit, edge), color="0.85", lw=0)
            ax.axhline(limit, color="0.35", ls="--", lw=0.8)
    ax.set_ylim(bottom, top)
    ax.grid(True, alpha=0.3)


def plot_trajectory(traj, path=None, title=None, dpi=120, reference=None, limits=True):
    """The motion against time: each joint's position in a panel of its own with its limits (the
    range beyond each limit grey), and the velocities, applied torques and energies (kinetic,
    potential, total, with the total's change in the title).

    A batch (``traj.q`` of shape ``(..., N, n)``) is drawn as fans: the median of the rollouts, and
    bands between their 25th and 75th and their 5th and 95th percentiles. ``reference``: the
    trajectory a controller tracked (a :class:`~screwdyn.trajectory.JointTrajectory`, any
    ``t -> (q_d, qd_d, qdd_d)``, or ``q_d (N, n)``), drawn dashed on the positions. ``limits``:
    draw the joint limits (``traj.limits``; the velocity and effort limits dashed on their panels).
    A model of more than 10 joints gets one panel for all positions.

    Returns the :class:`~matplotlib.figure.Figure`; with ``path``, also saves it there
    (the format follows the extension: .png, .pdf, .svg ...).
    """
    names = _labels(traj)
    n = traj.n
    batch = traj.q.ndim > 2
    q = traj.q.reshape((-1,) + traj.q.shape[-2:]) if batch else traj.q
    flat = (lambda x: x.reshape((-1,) + x.shape[-2:])) if batch else (lambda x: x)
    lim = traj.limits if limits and traj.limits else None
    q_d = _reference_positions(reference, traj.t, n)
    strips = n <= 10
    fig = _figure((12, max(7.5, 1.15 * n + 1.0) if strips else 7.5))
    outer = fig.add_gridspec(1, 2)
    left, right = outer[0, 0].subgridspec(n if strips else 1, 1), outer[0, 1].subgridspec(3, 1)
    colors = [f"C{i % 10}" for i in range(n)]
    if strips:
        qaxes = [fig.add_subplot(left[j, 0]) for j in range(n)]
        for j, ax in enumerate(qaxes):
            lo, hi = (lim["q_lower"][j], lim["q_upper"][j]) if lim else (np.inf, np.inf)
            _strip(ax, traj.t, q, j, lo, hi, colors[j], q_d)
            ax.set_ylabel(names[j], fontsize="small", rotation=0, ha="right", va="center")
            ax.tick_params(labelsize="small")
            if j < n - 1:
                ax.tick_params(labelbottom=False)
            ax.sharex(qaxes[0])
        qaxes[0].set_title("joint position q [rad, m]" + ("; joint limits dashed, beyond them grey" if lim else ""),
                           fontsize="medium")
        if q_d is not None:
            qaxes[0].legend(fontsize="x-small", loc="upper right")
        qaxes[-1].set_xlabel("time t [s]")
    else:
        ax = fig.add_subplot(left[0, 0])
        for j in range(n):
            _curves(ax, traj.t, q[..., j], colors[j], names[j])
            if lim:
                for x in (lim["q_lower"][j], lim["q_upper"][j]):
                    if np.isfinite(x):
                        ax.axhline(x, color=colors[j], ls="--", lw=0.6)
        ax.set_ylabel("joint position q [rad, m]")
        ax.set_xlabel("time t [s]")
        ax.grid(True, alpha=0.3)
        qaxes = [ax]
    axes = [fig.add_subplot(right[r, 0], sharex=qaxes[0]) for r in range(3)]
    drawn = False
    for ax, data, label, key in ((axes[0], flat(traj.qd), "joint velocity qd [rad/s, m/s]", "velocity"),
                                 (axes[1], flat(traj.tau), "applied torque tau [N m, N]", "effort")):
        for j, jn in enumerate(names):
            _curves(ax, traj.t, data[..., j], colors[j], jn)
        if lim:
            with np.errstate(invalid="ignore"):
                peak = np.nanmax(np.abs(data).reshape(-1, n), axis=0) if np.isfinite(data).any() else np.zeros(n)
            for j in range(n):   # the limits of the joints that came within half of them (the others squash it)
                x = lim[key][j]
                if np.isfinite(x) and peak[j] >= 0.5 * x:
                    drawn = True
                    for sign in (1, -1):
                        ax.axhline(sign * x, color=colors[j], ls="--", lw=0.7)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize="x-small", ncol=2 if n > 4 else 1, loc="best")
    if drawn:
        axes[0].set_title("velocity and effort limits dashed", fontsize="small", loc="right")
    if not np.any(traj.tau):
        axes[1].text(0.5, 0.5, "no applied torque (passive robot)", transform=axes[1].transAxes,
                     ha="center", va="center", color="0.4")
    ax = axes[2]
    K, U = (x.reshape(-1, len(traj.t)) if batch else x for x in (traj.kinetic_energy, traj.potential_energy))
    E = K + U
    _curves(ax, traj.t, K, "C0", "kinetic")
    _curves(ax, traj.t, U, "C1", "potential")
    _curves(ax, traj.t, E, "k", "total", lw=2.0)
    ax.set_ylabel("energy [J]")
    ax.set_xlabel("time t [s]")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    change = np.nanmedian(E[..., -1] - E[..., 0]) if batch else E[-1] - E[0]
    ax.set_title(f"total energy change {change:+.4g} J" + (" (median)" if batch else ""), fontsize="medium")
    if title is None:
        what = f"{int(np.prod(traj.q.shape[:-2]))} rollouts (median, 25-75 % and 5-95 % bands), " if batch else ""
        title = (f"{traj.model_name or 'robot'}: {what}{traj.t[-1]:g} s, "
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


def animate(model, traj, path, fps=25, speed=1.0, dpi=80, view=(25, -60), max_frames=600, member=None):
    """Write an animation of the stick figure following ``traj`` to ``path`` (``.gif`` with
    Pillow, ``.mp4`` with ffmpeg). ``speed`` > 1 plays faster than real time; at most
    ``max_frames`` frames are drawn. A batch of rollouts: ``member`` (its index, default the first)
    is the one drawn. Returns the number of frames written."""
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
    if traj.q.ndim > 2:
        traj = traj[(0,) * (traj.q.ndim - 2) if member is None else member]
    elif member is not None:
        raise InputError("member selects a rollout of a batch; this trajectory is one rollout")
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
