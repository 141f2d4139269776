"""The robot in a web browser: :func:`view` serves a 3D scene with `viser <https://viser.studio>`_.

Why viser (against meshcat, the other browser viewer robotics uses): its server runs in a thread of
this process and talks to the page over one websocket on one port, so a script or notebook goes on
while the page is open, and the page works through an SSH tunnel of that port; it has GUI controls
built in (sliders, buttons, checkboxes, served from Python), which a trajectory's time slider and
play button need (meshcat has neither: its animations are precomputed in the page, and it needs
ZeroMQ and a second process); it is maintained (releases every few weeks) and pip-installable with
its built page inside (``pip install 'screwdyn[viewer]'``).

The scene: one node per drawn part (:mod:`screwdyn.viz.scene`: a URDF visual, or a piece of the
stick figure of a model without visuals) under ``/robot/<frame>/``, where ``/robot/<frame>`` is a
frame node whose pose is the frame's pose from :func:`screwdyn.forward_kinematics`; the collision
geometry likewise (``model.collisions``, :mod:`screwdyn.viz.world`), shown on request; a
centre-of-mass marker ``/com``; the environment's obstacles under ``/environment/`` and its ground
as a grid in its plane (else a floor grid under the robot); the contacts (``/contacts/points``)
and their forces (``/contacts/forces``) of the configuration or trajectory sample shown. GUI: the
time slider, play/pause, speed and loop of a trajectory, or a slider per joint for one
configuration; check boxes for the link frames (their axes), the centre of mass, the geometry,
the collision geometry and the contacts.

Over SSH: run the viewer on the remote machine (it listens on 127.0.0.1:8080 by default), forward
the port with ``ssh -L 8080:localhost:8080 user@remote``, open http://localhost:8080 locally.
"""
from __future__ import annotations

import contextlib
import io
import threading
import time

import numpy as np

from ..configuration import neutral
from ..errors import InputError
from ..model import REVOLUTE
from . import scene as _scene
from . import world as _world
from .camera import Camera

__all__ = ["Viewer", "view"]


def _viser():
    try:
        import viser
    except ImportError:
        raise ImportError("the browser viewer needs viser (pip install 'screwdyn[viewer]'); "
                          "screwdyn.render draws pictures without it") from None
    return viser


def wxyz(R) -> np.ndarray:
    """Unit quaternions ``(w, x, y, z)`` (viser's order) of rotation matrices ``R (..., 3, 3)``."""
    from viser.transforms import SO3

    return np.asarray(SO3.from_matrix(np.asarray(R, dtype=float)).wxyz)


def _rgb255(c):
    return tuple(round(255 * float(x)) for x in np.asarray(c)[:3])


class Viewer:
    """A running viewer (returned by :func:`view`): ``url``, :meth:`show` a configuration,
    :meth:`seek` a time of the trajectory, :meth:`play` / :meth:`pause`, :meth:`close`.
    Usable as a context manager; shown inline in Jupyter (an iframe of ``url``)."""

    def __init__(self, model, q=None, trajectory=None, *, host="127.0.0.1", port=8080, geometry="auto",
                 frames=False, com=True, environment=None, contacts=None, forces=None, force_scale=None):
        viser = _viser()
        self.model = model
        collision = geometry == "collision"
        self.parts = _world.collision_parts(model) if collision else _scene.parts(model, geometry, stacklevel=4)
        self.collision_parts = [] if collision else _world.collision_parts(model)
        self.environment = model.environment if environment is None else environment
        self.contacts, self.forces, self.force_scale = contacts, forces, force_scale
        self.trajectory = None if trajectory is None else _scene.samples(trajectory)
        self._trajectory_object = trajectory
        self._sample = None
        nq = model.nq
        if self.trajectory is not None and self.trajectory[1].shape[1] != nq:
            raise InputError(f"the trajectory's q has {self.trajectory[1].shape[1]} columns, the model {nq}")
        self._q = neutral(model) if q is None else np.array(q, dtype=float).reshape(-1)
        if self._q.shape != (nq,) or not np.all(np.isfinite(self._q)):
            raise InputError(f"q must be {nq} finite numbers (model.joint_names order), got shape {np.shape(q)}")
        if self.trajectory is not None:
            self._q = self.trajectory[1][0].copy()
        self._lock = threading.RLock()
        self._closed = False
        self._playing = threading.Event()
        self._step = threading.Lock()   # held by the player over one step; pause() waits for it
        with contextlib.redirect_stdout(io.StringIO()):   # viser's banner: our url says the same
            self.server = viser.ViserServer(host=host, port=port, verbose=False)
        self.host, self.port = host, int(self.server.get_port())
        shown = "localhost" if host in ("0.0.0.0", "::", "") else host
        self.url = f"http://{shown}:{self.port}"
        self.server.gui.configure_theme(control_layout="floating", show_logo=False)
        self._check_contacts()
        self._build_scene(frames, com)
        self._build_gui(frames, com)
        if self.trajectory is not None:
            self.seek(float(self.trajectory[0][0]))
        else:
            self.show(self._q)
            self._show_contacts(None)
        self._player = threading.Thread(target=self._play_loop, name="screwdyn-viewer-play", daemon=True)
        self._player.start()

    # ------------------------------------------------------------------ scene
    def _build_scene(self, frames, com):
        model, sc = self.model, self.server.scene
        r = _scene.link_radius(model)
        up = _scene.up_rotation(model)
        sc.set_up_direction(tuple(up.T @ np.array([0.0, 0.0, 1.0])))
        self.frame_nodes = {}   # frame index -> its node: every frame, for the link frames' axes
        for k, name in enumerate(model.frame_names):
            self.frame_nodes[k] = sc.add_frame(f"/robot/{_scene.node_name(name)}", show_axes=bool(frames),
                                               axes_length=4 * r, axes_radius=0.3 * r)
        self._carrying = sorted({p.frame for p in self.parts})   # the frames moved while their axes are hidden
        self.nodes = {}   # part name -> scene handle: one per part
        for p in self.parts:
            C = np.asarray(p.face_colors)
            node = f"/robot/{p.name}"
            kw = {"wxyz": wxyz(p.pose[:3, :3]), "position": p.pose[:3, 3]}
            if np.allclose(C, C[0]):
                h = sc.add_mesh_simple(node, p.vertices, p.faces, color=_rgb255(C[0]), flat_shading=False, **kw)
            else:
                h = sc.add_mesh_trimesh(node, _trimesh(p.vertices, p.faces, C), **kw)
            self.nodes[p.name] = h
        for p in self.collision_parts:   # hidden until asked for
            self.nodes[p.name] = sc.add_mesh_simple(f"/robot/{p.name}", p.vertices, p.faces,
                                                    color=_rgb255(p.face_colors[0]), flat_shading=True,
                                                    wxyz=wxyz(p.pose[:3, :3]), position=p.pose[:3, 3], visible=False)
        self._carrying = sorted({p.frame for p in self.parts + self.collision_parts})
        V, F, C = _scene.com_marker(1.6 * r)
        self.com_node = sc.add_mesh_trimesh("/com", _trimesh(V, F, C), visible=bool(com))
        for p in _world.environment_parts(model, self.environment):
            sc.add_mesh_simple(f"/{p.name}", p.vertices, p.faces, color=_rgb255(p.face_colors[0]),
                               flat_shading=True, wxyz=wxyz(p.pose[:3, :3]), position=p.pose[:3, 3])
        # the ground's grid in its plane, else a floor grid under the robot as the renderer's floor
        P = _scene.world_vertices(self.parts, np.asarray(_poses(model, self._q))) @ up.T
        lo, hi = P.min(axis=0), P.max(axis=0)
        size = max(float(np.max(hi[:2] - lo[:2])), float(hi[2] - min(lo[2], 0.0)), 0.2)
        cell = _scene.floor_tile(size)
        half = np.ceil(2.0 * size / cell) * cell
        ground = _world.ground_of(self.environment)
        if ground is not None:
            T = np.asarray(ground.origin)
            c = up.T @ (0.5 * (lo + hi))
            centre = c - ((c - T[:3, 3]) @ T[:3, 2]) * T[:3, 2]
            sc.add_grid("/floor", 2 * half, 2 * half, plane="xy", cell_size=cell, section_size=5 * cell,
                        wxyz=wxyz(T[:3, :3]), position=centre)
        else:
            centre = up.T @ np.array([0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), min(lo[2], 0.0)])
            sc.add_grid("/floor", 2 * half, 2 * half, plane="xy", cell_size=cell, section_size=5 * cell,
                        wxyz=wxyz(up.T), position=centre)
        self.contact_radius = _world.marker_radius(P)
        self.contact_nodes = []
        cam = Camera.fit(P, 16, 10, fill=0.75)
        self.server.initial_camera.position = tuple(up.T @ np.asarray(cam.position))
        self.server.initial_camera.look_at = tuple(up.T @ np.asarray(cam.target))
        self.server.initial_camera.up = tuple(up.T @ np.array([0.0, 0.0, 1.0]))

    # ------------------------------------------------------------------ GUI
    def _build_gui(self, frames, com):
        gui, model = self.server.gui, self.model
        if self.trajectory is not None:
            t = self.trajectory[0]
            with gui.add_folder("trajectory"):
                step = float(np.min(np.diff(t))) if len(t) > 1 else 1.0
                self.time_slider = gui.add_slider("time [s]", float(t[0]), float(max(t[-1], t[0] + step)),
                                                  step=max(step, 1e-6), initial_value=float(t[0]))
                self.play_button = gui.add_button("Play", icon=None)
                self.speed = gui.add_slider("speed", 0.1, 4.0, step=0.1, initial_value=1.0)
                self.loop = gui.add_checkbox("loop", initial_value=True)
            self.time_slider.on_update(lambda _: self._on_time())
            self.play_button.on_click(lambda _: self.pause() if self._playing.is_set() else self.play())
        else:
            self.joint_sliders = {}
            with gui.add_folder("joints", expand_by_default=len(_scalar_joints(model)) <= 12):
                for name, k, i in _scalar_joints(model):
                    lo, hi = model.q_lower[i], model.q_upper[i]
                    span = np.pi if model.joint_type[k] == REVOLUTE else 1.0
                    lo = lo if np.isfinite(lo) else min(-span, self._q[i])
                    hi = hi if np.isfinite(hi) else max(span, self._q[i])
                    s = gui.add_slider(name, float(lo), float(hi), step=float((hi - lo) / 1000),
                                       initial_value=float(np.clip(self._q[i], lo, hi)))
                    s.on_update(lambda ev, i=i: self._on_joint(i, ev.target.value))
                    self.joint_sliders[name] = s
        with gui.add_folder("show"):
            self.show_frames = gui.add_checkbox("link frames", initial_value=bool(frames))
            self.show_com = gui.add_checkbox("centre of mass", initial_value=bool(com))
            self.show_geometry = gui.add_checkbox("geometry", initial_value=True)
            self.show_collision = gui.add_checkbox("collision geometry", initial_value=False,
                                                   disabled=not self.collision_parts)
            self.show_contacts = gui.add_checkbox("contacts", initial_value=True, disabled=self.contacts is None)
        self.show_frames.on_update(lambda ev: self._set_frames(ev.target.value))
        self.show_collision.on_update(lambda ev: self._set_collision(ev.target.value))
        self.show_contacts.on_update(lambda ev: self._show_contacts(self._sample))
        self.show_com.on_update(lambda ev: setattr(self.com_node, "visible", bool(ev.target.value)))
        self.show_geometry.on_update(lambda ev: self._set_geometry(ev.target.value))

    def _set_frames(self, on):
        with self.server.atomic():
            for h in self.frame_nodes.values():
                h.show_axes = bool(on)
        self._show(self._q)   # the frames without geometry were left where they were

    def _set_geometry(self, on):
        with self.server.atomic():
            for p in self.parts:
                self.nodes[p.name].visible = bool(on)

    def _set_collision(self, on):
        with self.server.atomic():
            for p in self.collision_parts:
                self.nodes[p.name].visible = bool(on)

    # ------------------------------------------------------------------ contacts
    def _check_contacts(self):
        """The contacts given (one state's, or the trajectory samples'), and their forces."""
        traj = self.trajectory
        if traj is not None and self.contacts is None:
            self.contacts = getattr(self._trajectory_object, "contacts", None)
            self.forces = getattr(self._trajectory_object, "contact_forces", None) if self.forces is None \
                else self.forces
        if self.contacts is None:
            return
        if traj is not None:
            count = np.shape(self.contacts[1])
            if count != (len(traj[0]),):
                raise InputError(f"contacts: a Contacts of the {len(traj[0])} samples, got count of shape {count}")
        if self.forces is not None:
            self.forces = np.asarray(self.forces, dtype=float)
            if self.force_scale is None:
                top = float(np.linalg.norm(self.forces, axis=-1).max()) if self.forces.size else 0.0
                self.force_scale = 15 * _world.marker_radius(_scene.world_vertices(
                    self.parts, np.asarray(_poses(self.model, self._q)))) / top if top > 0 else 0.0

    def _show_contacts(self, k):
        """Markers at the contacts of sample ``k`` (None: the one state given) and arrows of their forces."""
        if self.contacts is None:
            return
        sc = self.server.scene
        for h in self.contact_nodes:
            h.remove()
        self.contact_nodes = []
        if not self.show_contacts.value:
            return
        one = (self.contacts[0], self.contacts[1]) if k is None else (self.contacts[0][k], self.contacts[1][k])
        P = _world.contact_points(one)
        if len(P):
            self.contact_nodes.append(sc.add_point_cloud("/contacts/points", P.astype(np.float32),
                                                         _rgb255(_world.CONTACT_COLOR), point_size=2 * self.contact_radius,
                                                         point_shape="circle", precision="float32"))
        if self.forces is not None and len(P):
            Fk = (self.forces if k is None else self.forces[k])[:len(P)]
            ends = np.stack([P, P + Fk * self.force_scale], axis=1)
            keep = np.linalg.norm(Fk, axis=1) * self.force_scale > 2 * self.contact_radius
            if keep.any():
                self.contact_nodes.append(sc.add_arrows("/contacts/forces", ends[keep], _rgb255(_world.FORCE_COLOR),
                                                        shaft_radius=0.35 * self.contact_radius,
                                                        head_radius=0.9 * self.contact_radius,
                                                        head_length=2.5 * self.contact_radius))

    def _on_joint(self, i, value):
        with self._lock:
            q = self._q.copy()
            q[i] = value
        self.show(q)

    def _on_time(self):
        t, Q = self.trajectory
        k = int(np.clip(np.searchsorted(t, self.time_slider.value - 1e-9), 0, len(t) - 1))
        self._show(Q[k])
        self._sample = k
        self._show_contacts(k)

    # ------------------------------------------------------------------ API
    @property
    def q(self) -> np.ndarray:
        """The configuration shown."""
        return self._q.copy()

    def show(self, q):
        """Show configuration ``q`` (one state, ``model.joint_names`` order)."""
        q = np.array(q, dtype=float).reshape(-1)
        self._show(q)
        if self.trajectory is None:
            for name, _, i in _scalar_joints(self.model):
                s = self.joint_sliders.get(name)
                if s is not None and abs(s.value - q[i]) > 1e-12 and s.min <= q[i] <= s.max:
                    s.value = float(q[i])

    def _show(self, q):
        import screwdyn

        T = np.asarray(_poses(self.model, q))
        Rq = wxyz(T[:, :3, :3])
        moved = self.frame_nodes if self.show_frames.value else self._carrying
        with self._lock, self.server.atomic():
            self._q = q
            for k in moved:
                h = self.frame_nodes[k]
                h.position = T[k, :3, 3]
                h.wxyz = Rq[k]
            if self.model.total_mass > 0:
                self.com_node.position = np.asarray(screwdyn.center_of_mass(self.model, q))

    def seek(self, t):
        """Show the trajectory's sample at time ``t`` (moves the time slider)."""
        if self.trajectory is None:
            raise InputError("seek: this viewer shows one configuration, not a trajectory")
        lo, hi = self.time_slider.min, self.time_slider.max
        value = float(np.clip(t, lo, hi))
        if self.time_slider.value == value:
            self._on_time()
        else:
            self.time_slider.value = value   # calls _on_time, as a move of the slider in the page does

    def play(self):
        """Play the trajectory from the time shown (in real time times the speed slider)."""
        if self.trajectory is None:
            raise InputError("play: this viewer shows one configuration, not a trajectory")
        self.play_button.label = "Pause"
        self._playing.set()

    def pause(self):
        """Stop playing; when it returns, the time shown no longer changes."""
        with self._step:
            self._playing.clear()
        if self.trajectory is not None:
            self.play_button.label = "Play"

    def _play_loop(self):
        last = time.perf_counter()
        while not self._closed:
            if not self._playing.wait(timeout=0.2):
                last = time.perf_counter()
                continue
            time.sleep(1 / 30)
            with self._step:
                now = time.perf_counter()
                dt, last = now - last, now
                if self._closed:
                    break
                if not self._playing.is_set():
                    continue
                t = self.time_slider.value + dt * self.speed.value
                if t >= self.time_slider.max:
                    if self.loop.value:
                        t = self.time_slider.min
                    else:
                        t = self.time_slider.max
                        self._playing.clear()
                        self.play_button.label = "Play"
                try:
                    self.seek(t)
                except Exception:  # noqa: BLE001 - the server stopped under us
                    break

    def wait(self):
        """Serve until interrupted (Ctrl+C), then close."""
        try:
            while not self._closed:
                time.sleep(0.2)
        finally:
            self.close()

    def close(self):
        """Stop the server (the page goes blank); idempotent."""
        if self._closed:
            return
        self._closed = True
        self._playing.set()   # wake the player thread so that it ends
        with contextlib.redirect_stdout(io.StringIO()):
            self.server.stop()
        self._player.join(timeout=2)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        what = f"{len(self.trajectory[0])} samples" if self.trajectory is not None else "one configuration"
        return f"Viewer({self.model.name!r}, {what}, {self.url}{', closed' if self._closed else ''})"

    def _repr_html_(self):
        return (f'<iframe src="{self.url}" width="100%" height="480" style="border:none"></iframe>'
                f'<p><a href="{self.url}" target="_blank">{self.url}</a></p>')


def _poses(model, q):
    import screwdyn

    return screwdyn.forward_kinematics(model, q)


def _scalar_joints(model):
    """``(joint name, joint index, index into q)`` of each joint with one coordinate (a slider each)."""
    return [(name, k, int(model.idx_qs[k])) for k, name in enumerate(model.joint_names) if model.nqs[k] == 1]


def _trimesh(V, F, C):
    import trimesh

    return trimesh.Trimesh(vertices=V, faces=F, face_colors=(np.asarray(C) * 255).round().astype(np.uint8),
                           process=False)


def view(model, q=None, *, host="127.0.0.1", port=8080, geometry="auto", frames=False, com=True, environment=None,
         contacts=None, forces=None, force_scale=None) -> Viewer:
    """Show ``model`` in a web browser; returns at once with a :class:`Viewer` (``.url``, ``.close()``).

    ``q``: a configuration (default: the zero one), with a slider per joint in the page; or a
    :class:`~screwdyn.Trajectory` (or a ``(t, q)`` pair), with a time slider, play/pause, speed and
    loop. The geometry is the URDF's visuals, or a stick figure with volume for a model without
    (``geometry``, as :func:`screwdyn.render`; ``"collision"``: ``model.collisions``, which can be
    switched on in the page otherwise); ``frames`` shows every link frame's axes, ``com`` the centre
    of mass (both can be switched in the page). ``environment`` (default ``model.environment``):
    its ground as a grid in its plane, its obstacles. ``contacts``: a
    :class:`screwdyn.collision.Contacts` of the configuration (or of the trajectory's samples; by
    default the trajectory's ``contacts``), marked at their points, and ``forces`` ``(K, 3)`` (``(N,
    K, 3)``; by default the trajectory's ``contact_forces``) in the world frame [N], drawn as
    arrows ``force_scale`` m/N long.

    The server listens on ``host:port`` (the next free port when that one is taken; ``port=0``:
    any). The default ``127.0.0.1`` serves this machine only: from another one, forward the port
    over SSH (``ssh -L 8080:localhost:8080 user@this-machine``, then open http://localhost:8080
    there), or pass ``host="0.0.0.0"`` to serve the network. Needs viser and trimesh
    (``pip install 'screwdyn[viewer]'``).
    """
    kw = {"host": host, "port": port, "geometry": geometry, "frames": frames, "com": com, "environment": environment,
          "contacts": contacts, "forces": forces, "force_scale": force_scale}
    if hasattr(q, "t") and hasattr(q, "q") or (isinstance(q, tuple) and len(q) == 2 and np.ndim(q[1]) == 2):
        return Viewer(model, trajectory=q, **kw)
    return Viewer(model, q, **kw)
