"""Pictures: time plots of a simulation or of identified torques, and the robot as a 3D stick
figure (still or animated).

Everything here draws on :class:`matplotlib.figure.Figure` objects with the Agg canvas, never
through ``pyplot``: it works without a display and does not touch the user's pyplot state.
The figures display in Jupyter as they are returned.

* :func:`plot_trajectory`: joint positions (with their limits), velocities, torques and energies
  against time, in one figure; a floating robot's base (position, roll/pitch/yaw, twist) in panels
  of its own; a batch of rollouts as fans (median and percentile bands).
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

__all__ = ["plot_trajectory", "plot_torques", "plot_robot", "animate", "skeleton", "roll_pitch_yaw"]


def _figure(figsize, layout="constrained"):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout=layout)
    FigureCanvasAgg(fig)
    return fig


_FAN = (5, 25, 50, 75, 95)   # percentiles of a batch's fan: the outer band, the inner band, the median


def _colors(k):
    """``k`` colours, none repeated: matplotlib's ten, then tab20's twenty (its dark halves first,
    so that neighbours differ in hue), then samples of the turbo map."""
    from matplotlib import colormaps

    if k <= 10:
        return [f"C{i}" for i in range(k)]
    if k <= 20:
        tab = colormaps["tab20"].colors
        return [tab[i] for i in list(range(0, 20, 2)) + list(range(1, 20, 2))][:k]
    return [colormaps["turbo"](x) for x in np.linspace(0.05, 0.95, k)]


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


_IN_PANEL = 12   # a panel of more curves (a humanoid's joints) leaves its legend to the figure's, below


def _legend(ax, count, note=True):
    """The panel's legend, or for more than ``_IN_PANEL`` curves a note that the figure's is below."""
    if count <= _IN_PANEL:
        ax.legend(fontsize="x-small", ncol=1 if count <= 4 else 2, loc="best")
    elif note:
        ax.set_title("colours: the joints' legend below", fontsize="x-small", loc="left")


class _Layout:
    """Which entries of ``q`` and ``qd`` belong to what, for the panels of :func:`plot_trajectory`:
    ``joints`` ``[(name, q index, v index)]`` of the one-DoF joints; ``free`` and ``balls``
    ``[(name, q index, v index)]`` of the free-flyers (``q``: position, then quaternion ``(x, y, z, w)``;
    ``qd``: twist ``(omega, v)`` in its frame) and spherical joints; ``dofs`` ``[(name, v index)]`` of
    the velocities and torques drawn with the joints' (all but the free-flyers'). Without a model
    (a trajectory read from a file) whose ``q`` holds quaternions, each entry of ``q`` is a curve."""

    def __init__(self, traj):
        from .model import FREE_FLYER, SPHERICAL

        m, n, nq = traj.model, traj.n, traj.q.shape[-1]
        names = list(traj.joint_names) if traj.joint_names else [f"q{i}" for i in range(n)]
        self.free, self.balls = [], []
        if m is not None and m.nq == nq and m.nv == n:
            self.joints = []
            for j, name in enumerate(m.joint_names):
                entry = (name, int(m.idx_qs[j]), int(m.idx_vs[j]))
                kind = m.joint_type[j]
                (self.free if kind == FREE_FLYER else self.balls if kind == SPHERICAL else self.joints).append(entry)
        elif nq == n:
            self.joints = [(name, i, i) for i, name in enumerate(names)]
        else:   # q with quaternions, and no model to say where they are: each entry, as it is
            self.joints = [(f"q[{i}]", i, None) for i in range(nq)]
        base = {v + k for _, _, v in self.free for k in range(6)}
        self.dofs = [(names[i], i) for i in range(n) if i not in base]


def _reference_positions(reference, t, n):
    """``q_d (N, n)`` of a reference (a callable ``t -> (q_d, qd_d, qdd_d)`` or an array ``(N, n)``)."""
    if reference is None:
        return None
    q_d = reference(t)[0] if callable(reference) else reference
    q_d = np.asarray(q_d, dtype=float)
    if q_d.shape != (len(t), n):
        raise InputError(f"the reference must give q_d of shape ({len(t)}, {n}), got {q_d.shape}")
    return q_d


def _strip(ax, t, qj, lo, hi, color, q_dj=None):
    """A joint's positions ``qj`` against time with its limits: the range beyond each drawn grey and
    edged by a dashed line, the view wide enough to show both limits and the motion."""
    _curves(ax, t, qj, color)
    if q_dj is not None:
        ax.plot(t, q_dj, lw=1.0, ls="--", color="k", label="reference")
    finite = [x for x in (lo, hi) if np.isfinite(x)]
    with np.errstate(invalid="ignore"):
        seen = qj[np.isfinite(qj)]
    values = np.concatenate([seen, finite]) if seen.size else np.array(finite or [0.0])
    span = max(float(values.max() - values.min()), 1e-3)
    bottom, top = values.min() - 0.12 * span, values.max() + 0.12 * span
    for limit, edge in ((lo, bottom), (hi, top)):
        if np.isfinite(limit):
            ax.axhspan(min(limit, edge), max(limit, edge), color="0.85", lw=0)
            ax.axhline(limit, color="0.35", ls="--", lw=0.8)
    ax.set_ylim(bottom, top)
    ax.grid(True, alpha=0.3)


def _near(x, lo, hi, share=0.1):
    """Whether positions ``x`` come within ``share`` of the range ``[lo, hi]`` of a limit (or beyond)."""
    with np.errstate(invalid="ignore"):
        seen = x[np.isfinite(x)]
    if not seen.size or not (np.isfinite(lo) or np.isfinite(hi)):
        return False
    margin = share * (hi - lo) if np.isfinite(hi - lo) else 0.1 * max(1.0, float(np.abs(seen).max()))
    return bool(seen.min() <= lo + margin or seen.max() >= hi - margin)


def roll_pitch_yaw(quaternion):
    """Roll, pitch, yaw ``(..., 3)`` [rad] of unit quaternions ``(..., 4)`` ``(x, y, z, w)``: the Z-Y-X
    Euler angles, ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (pitch in ``[-pi/2, pi/2]``; normalised first)."""
    x, y, z, w = np.moveaxis(np.asarray(quaternion, dtype=float), -1, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = 1.0 / np.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x * s, y * s, z * s, w * s
    roll = np.arctan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2.0 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return np.stack([roll, pitch, yaw], axis=-1)


def _unwrapped(angles):
    """Angles ``(..., N)`` over time without the jumps of 2 pi (NaN samples of diverged rollouts kept)."""
    good = np.isfinite(angles)
    out = np.unwrap(np.where(good, angles, 0.0), axis=-1)
    return np.where(good, out, np.nan)


def plot_trajectory(traj, path=None, title=None, dpi=120, reference=None, limits=True):
    """The motion against time: each joint's position with its limits (the range beyond each limit
    grey), and the velocities, applied torques and energies (kinetic, potential, total, with the
    total's change in the title). A legend (or a label) in every panel, no colour twice in one.

    A floating robot's base (a free-flyer) gets panels of its own: its position ``x, y, z`` [m],
    its orientation as roll, pitch, yaw [rad] (Z-Y-X Euler angles of its quaternion, unwrapped over
    time: :func:`roll_pitch_yaw`) and its twist ``(omega, v)`` in its own frame; a spherical
    joint's orientation joins the base's, as roll, pitch, yaw of its parent.

    A batch (``traj.q`` of shape ``(..., N, nq)``) is drawn as fans: the median of the rollouts, and
    bands between their 25th and 75th and their 5th and 95th percentiles. ``reference``: the
    trajectory a controller tracked (a :class:`~screwdyn.trajectory.JointTrajectory`, any
    ``t -> (q_d, qd_d, qdd_d)``, or ``q_d (N, n)``), drawn dashed on the positions. ``limits``:
    draw the joint limits (``traj.limits``; the velocity and effort limits dashed on their panels).
    Up to 10 one-DoF joints get a position panel each, more share one panel (their limits drawn for
    the joints that come near them).

    Returns the :class:`~matplotlib.figure.Figure`; with ``path``, also saves it there
    (the format follows the extension: .png, .pdf, .svg ...).
    """
    lay = _Layout(traj)
    t = traj.t
    batch = traj.q.ndim > 2
    flat = (lambda x: x.reshape((-1,) + x.shape[-2:])) if batch else (lambda x: x)
    q, qd, tau = flat(traj.q), flat(traj.qd), flat(traj.tau)
    lim = traj.limits if limits and traj.limits else None
    q_d = _reference_positions(reference, t, q.shape[-1])
    joints, base, balls = lay.joints, lay.free, lay.balls
    strips = 0 < len(joints) <= 10
    base_rows = [2] * (1 if base else 0) + [2] * (1 if base or balls else 0)
    heights = base_rows + ([1] * len(joints) if strips else [max(2, len(base_rows) * 2)])
    rows = len(heights)
    right_rows = 3 + bool(base)
    fig = _figure((12, max(7.5, 1.15 * (len(joints) if strips else 4) + 2.3 * len(base_rows) + 1.0)))
    outer = fig.add_gridspec(1, 2)
    left = outer[0, 0].subgridspec(rows, 1, height_ratios=heights)
    right = outer[0, 1].subgridspec(right_rows, 1)
    first = fig.add_subplot(left[0, 0])
    axes_left = [first] + [fig.add_subplot(left[r, 0], sharex=first) for r in range(1, rows)]
    row = 0
    if base:   # the base's position: x, y, z of each free-flyer
        ax = axes_left[row]
        row += 1
        many = len(base) > 1
        colors = _colors(3 * len(base))
        for b, (name, iq, _) in enumerate(base):
            for k, axis in enumerate("xyz"):
                _curves(ax, t, q[..., iq + k], colors[3 * b + k], f"{name}.{axis}" if many else axis)
        ax.set_title("base position [m] (world)", fontsize="medium")
        ax.grid(True, alpha=0.3)
        _legend(ax, 3 * len(base))
    if base or balls:   # orientations: roll, pitch, yaw of each free-flyer's and spherical joint's quaternion
        ax = axes_left[row]
        row += 1
        turning = [(name, iq + 3, "base" if base and name == base[0][0] else name) for name, iq, _ in base]
        turning += [(name, iq, name) for name, iq, _ in balls]
        colors = _colors(3 * len(turning))
        for b, (name, iq, label) in enumerate(turning):
            rpy = roll_pitch_yaw(q[..., iq:iq + 4])
            for k, angle in enumerate(("roll", "pitch", "yaw")):
                _curves(ax, t, _unwrapped(rpy[..., k]), colors[3 * b + k],
                        angle if len(turning) == 1 else f"{label} {angle}")
        ax.set_title("orientation: roll, pitch, yaw [rad] (Z-Y-X Euler angles"
                     + (", of the base in the world" if base and not balls else "") + ")", fontsize="medium")
        ax.grid(True, alpha=0.3)
        _legend(ax, 3 * len(turning))
    colors = _colors(len(joints))
    reference_columns = q_d is not None and q_d.shape[1] == q.shape[-1]
    if strips:
        qaxes = axes_left[row:]
        for j, (ax, (name, iq, _)) in enumerate(zip(qaxes, joints)):
            lo, hi = (lim["q_lower"][iq], lim["q_upper"][iq]) if lim else (np.inf, np.inf)
            _strip(ax, t, q[..., iq], lo, hi, colors[j], q_d[:, iq] if reference_columns else None)
            ax.set_ylabel(name, fontsize="small", rotation=0, ha="right", va="center")
            ax.tick_params(labelsize="small")
        qaxes[0].set_title("joint position q [rad, m]" + ("; joint limits dashed, beyond them grey" if lim else ""),
                           fontsize="medium")
        if reference_columns:
            qaxes[0].legend(fontsize="x-small", loc="upper right")
    elif joints:
        ax = axes_left[row]
        drawn = False
        for j, (name, iq, _) in enumerate(joints):
            _curves(ax, t, q[..., iq], colors[j], name)
            if reference_columns:
                ax.plot(t, q_d[:, iq], lw=0.8, ls="--", color=colors[j])
            if lim and _near(q[..., iq], lim["q_lower"][iq], lim["q_upper"][iq]):
                drawn = True
                for x in (lim["q_lower"][iq], lim["q_upper"][iq]):
                    if np.isfinite(x):
                        ax.axhline(x, color=colors[j], ls="--", lw=0.6)
        ax.set_title("joint position q [rad, m]" + ("; limits dashed (of the joints near them)" if drawn else "")
                     + ("; colours: legend below" if len(joints) > _IN_PANEL else ""), fontsize="medium")
        ax.grid(True, alpha=0.3)
        _legend(ax, len(joints), note=False)
        qaxes = [ax]
    else:
        qaxes = axes_left[row:]
        qaxes[0].set_axis_off()
    for ax in axes_left[:-1]:
        ax.tick_params(labelbottom=False)
    axes_left[-1].set_xlabel("time t [s]")
    axes = [fig.add_subplot(right[r, 0], sharex=first) for r in range(right_rows)]
    if base:   # the base's twist (omega, v), in its own frame
        ax = axes.pop(0)
        colors = _colors(6 * len(base))
        for b, (name, _, iv) in enumerate(base):
            for k, part in enumerate(("wx", "wy", "wz", "vx", "vy", "vz")):
                _curves(ax, t, qd[..., iv + k], colors[6 * b + k], part if len(base) == 1 else f"{name}.{part}",
                        ls="-" if k < 3 else "--")
        ax.set_title("base twist in its frame: omega [rad/s] solid, v [m/s] dashed", fontsize="medium")
        ax.grid(True, alpha=0.3)
        _legend(ax, 6 * len(base))
    dofs = lay.dofs
    colors = _colors(len(dofs))
    drawn = False
    for ax, data, label, key in ((axes[0], qd, "joint velocity qd [rad/s, m/s]", "velocity"),
                                 (axes[1], tau, "applied torque tau [N m, N]", "effort")):
        for c, (name, iv) in enumerate(dofs):
            _curves(ax, t, data[..., iv], colors[c], name)
        if lim:
            columns = [iv for _, iv in dofs]
            with np.errstate(invalid="ignore"):
                part = data[..., columns]
                peak = (np.nanmax(np.abs(part).reshape(-1, len(columns)), axis=0) if np.isfinite(part).any()
                        else np.zeros(len(columns)))
            for c, iv in enumerate(columns):   # the limits of the joints that came within half of them (the others squash it)
                x = lim[key][iv]
                if np.isfinite(x) and peak[c] >= 0.5 * x:
                    drawn = True
                    for sign in (1, -1):
                        ax.axhline(sign * x, color=colors[c], ls="--", lw=0.7)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        if dofs:
            _legend(ax, len(dofs))
    if drawn:
        axes[0].set_title("velocity and effort limits dashed", fontsize="small", loc="right")
    if not np.any(tau):
        axes[1].text(0.5, 0.5, "no applied torque (passive robot)", transform=axes[1].transAxes,
                     ha="center", va="center", color="0.4")
    ax = axes[2]
    K, U = (x.reshape(-1, len(t)) if batch else x for x in (traj.kinetic_energy, traj.potential_energy))
    E = K + U
    _curves(ax, t, K, "C0", "kinetic")
    _curves(ax, t, U, "C1", "potential")
    _curves(ax, t, E, "k", "total", lw=2.0)
    ax.set_ylabel("energy [J]")
    ax.set_xlabel("time t [s]")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    for a in axes[:-1]:
        a.tick_params(labelbottom=False)
    change = np.nanmedian(E[..., -1] - E[..., 0]) if batch else E[-1] - E[0]
    ax.set_title(f"total energy change {change:+.4g} J" + (" (median)" if batch else ""), fontsize="medium")
    if title is None:
        what = f"{int(np.prod(traj.q.shape[:-2]))} rollouts (median, 25-75 % and 5-95 % bands), " if batch else ""
        title = (f"{traj.model_name or 'robot'}: {what}{t[-1]:g} s, "
                 f"{traj.integrator or 'simulation'}, dt = {traj.dt:g} s")
    fig.suptitle(title)
    if max(len(joints), len(dofs)) > _IN_PANEL:   # one legend for the joints' panels, their colours the same
        shown = joints if len(joints) >= len(dofs) else [(name, None, iv) for name, iv in dofs]
        colors = _colors(len(shown))
        from matplotlib.lines import Line2D
        handles = [Line2D([], [], color=c, lw=1.5) for c in colors]
        fig.legend(handles, [name for name, _, _ in shown], loc="outside lower center", ncol=min(6, len(shown)),
                   fontsize="x-small", title="joints")
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
