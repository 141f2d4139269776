"""Pictures of the robot without a display: a software renderer (NumPy and one numba kernel).

:func:`render` draws the robot at one configuration into an image array and, given a path, a PNG
(or any format Pillow writes); :func:`animate` draws a trajectory into a GIF (Pillow) or an MP4
(imageio with imageio-ffmpeg). Nothing needs OpenGL, an X server or a GPU: the same picture
comes out of a laptop, a headless server and CI.

How a picture is made (the parts from :mod:`screwdyn.viz.scene`):

1. the pose of every frame from :func:`screwdyn.forward_kinematics`; each part's vertices moved
   there (``T_0_frame @ part.pose``);
2. the camera (:class:`~screwdyn.viz.camera.Camera`; by default one fitted around the robot),
   the vertices projected, the triangles z-buffered at ``supersample`` times the resolution
   (:mod:`screwdyn.viz.raster`);
3. flat (Lambert) shading of each triangle by a key and a fill light fixed to the camera, both sides
   of a surface lit alike (mesh files do not agree on a winding);
4. a checkered floor under the robot with the robot's shadow cast by a light from above, fading
   into the background: the environment's ground (:mod:`screwdyn.environment`; a tilted one, a
   slope, as a checkered slab of its plane), else at the lowest of the base and the robot; the
   environment's obstacles; contact points and force arrows when given (:mod:`screwdyn.viz.world`);
   a dark outline where one part meets another or the background;
5. the supersampled image averaged down (antialiasing).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..configuration import neutral
from ..errors import InputError
from . import scene as _scene
from . import world as _world
from .camera import Camera
from .raster import compose, floor, rasterize

__all__ = ["BACKGROUND", "Renderer", "animate", "render"]

BACKGROUND = (0.965, 0.97, 0.975)
_FLOOR = ((0.90, 0.905, 0.915), (0.83, 0.84, 0.855))
_KEY = np.array([-0.45, -0.75, -0.5])    # towards the lights, in camera axes (x right, y down, z forward)
_FILL = np.array([0.7, -0.1, -0.7])
_CAMERA_KEYS = ("azimuth", "elevation", "distance", "target", "fov", "position", "up")


class Renderer:
    """The parts of a model, joined for drawing, and the settings of its pictures. :func:`render`
    and :func:`animate` make one; make one yourself to draw many configurations of one model."""

    def __init__(self, model, *, geometry="auto", frames=False, com=False, width=800, height=600,
                 supersample=2, floor=True, outline=True, background=BACKGROUND, environment=None, stacklevel=3):
        for key, v in (("width", width), ("height", height), ("supersample", supersample)):
            if not isinstance(v, (int, np.integer)) or v < 1 or (key != "supersample" and v < 8):
                raise InputError(f"{key} must be a whole number (images at least 8 pixels), got {v!r}")
        self.model = model
        self.width, self.height, self.ss = int(width), int(height), int(supersample)
        self.floor, self.outline = bool(floor), bool(outline)
        self.background = np.clip(np.asarray(background, dtype=float).reshape(3), 0, 1)
        if geometry == "collision":
            parts = _world.collision_parts(model)
        else:
            parts = list(_scene.parts(model, geometry, stacklevel=stacklevel + 1))
        self.environment = model.environment if environment is None else environment
        self.robot_parts = len(parts)
        self.robot_vertices = sum(len(p.vertices) for p in parts)
        parts += _world.environment_parts(model, self.environment)
        self.ground = _world.ground_of(self.environment)
        r = _scene.link_radius(model)
        if frames:
            names = model.frame_names if frames is True else [frames] if isinstance(frames, str) else list(frames)
            V, F, C = _scene.axes(4 * r, 0.3 * r)
            for name in names:
                k = model.frame_index(name)
                parts.append(_scene.Part(f"{model.frame_names[k]}/axes", k, np.eye(4), V, F, C))
        self.com = bool(com)
        if self.com:   # its frame: an extra pose after the model's frames, at the centre of mass
            parts.append(_scene.Part("com", len(model.frame_names), np.eye(4), *_scene.com_marker(1.6 * r)))
        if not parts:
            raise InputError(f"model {model.name!r}: nothing to draw")
        self.parts = parts
        offsets = np.cumsum([0] + [len(p.vertices) for p in parts])
        self.faces = np.vstack([p.faces + o for p, o in zip(parts, offsets[:-1])]).astype(np.int64)
        self.colors = np.vstack([p.face_colors[:, :3] for p in parts])
        self.face_part = np.repeat(np.arange(len(parts)), [len(p.faces) for p in parts])
        self.radius = r
        up = _scene.up_rotation(model)
        self.up = None if np.allclose(up, np.eye(3)) else up
        self.floor_z, self.slope = None, False   # the ground's height in the drawing, or a slope
        if self.ground is not None:
            n = up @ self.ground.origin[:3, 2]
            if n[2] > 1 - 1e-9:
                self.floor_z = float((up @ self.ground.origin[:3, 3])[2])
            else:
                self.slope = True

    # ------------------------------------------------------------------ geometry
    def poses(self, q):
        """Poses of the model's frames (and of the centre of mass) at ``q``: ``(k [+ 1], 4, 4)``."""
        import screwdyn

        T = np.asarray(screwdyn.forward_kinematics(self.model, q))
        if self.com:
            Tc = np.eye(4)
            Tc[:3, 3] = screwdyn.center_of_mass(self.model, q) if self.model.total_mass > 0 else 0.0
            T = np.concatenate([T, Tc[None]])
        return T

    def vertices(self, q):
        """Every vertex at ``q``, ``(V, 3)``, in the base frame turned so that +z is against gravity
        (:func:`~screwdyn.viz.scene.up_rotation`; the base frame itself for gravity along -z)."""
        V = _scene.world_vertices(self.parts, self.poses(q))
        return V if self.up is None else V @ self.up.T

    def camera(self, points, camera=None, floor_z=None):
        """The camera for a picture of ``points``: ``camera`` as given (a :class:`Camera`, or a
        dict of :meth:`Camera.orbit` / :meth:`Camera.fit` arguments; what is left out is fitted)."""
        if isinstance(camera, Camera):
            camera = {"position": camera.position, "target": camera.target, "up": camera.up, "fov": camera.fov}
        spec = {} if camera is None else dict(camera)
        unknown = set(spec) - set(_CAMERA_KEYS)
        if unknown:
            raise InputError(f"camera: unknown keys {sorted(unknown)}; use {list(_CAMERA_KEYS)} or a Camera")
        if self.up is not None:   # points given in the base frame, drawn in the gravity-up frame
            spec.update({k: self.up @ np.asarray(spec[k], dtype=float) for k in ("position", "target", "up")
                         if k in spec})
        if "position" in spec:
            if "target" not in spec:
                raise InputError("camera: a position needs a target")
            return Camera(spec["position"], spec["target"], spec.get("up", (0, 0, 1)), spec.get("fov", 35.0))
        P = np.asarray(points)
        if floor_z is not None and self.floor:   # keep the base of the robot in view
            P = np.vstack([P, [[P[:, 0].mean(), P[:, 1].mean(), floor_z]]])
        return Camera.fit(P, self.width, self.height, spec.get("azimuth", -50.0), spec.get("elevation", 22.0),
                          spec.get("fov", 35.0), target=spec.get("target"), distance=spec.get("distance"),
                          up=spec.get("up", (0.0, 0.0, 1.0)))

    # ------------------------------------------------------------------ drawing
    def floor_height(self, Vw) -> float:
        """Where the floor is drawn: the environment's horizontal ground, else under the lowest of
        the base and the vertices ``Vw``."""
        return self.floor_z if self.floor_z is not None else _floor_height(Vw)

    def extras(self, Vw, contacts=None, forces=None, force_scale=None, span=None):
        """The triangles drawn besides the parts, in the drawing's frame: a slope (a tilted ground)
        and the contacts with their force arrows: ``(V, F, C)``."""
        pieces = []
        if self.slope:
            lo, hi = Vw.min(axis=0), Vw.max(axis=0)
            size = max(float(np.max(hi - lo)), 0.2) if span is None else span[1]
            centre = 0.5 * (lo + hi)
            up = np.eye(3) if self.up is None else self.up
            V, F, C = _world.slope_mesh(self.ground, up.T @ centre, 1.6 * size + 0.3, _scene.floor_tile(size))
            pieces.append((V @ up.T, F, C))
        P = _world.contact_points(contacts)
        if len(P) or forces is not None:
            up = np.eye(3) if self.up is None else self.up
            V, F, C = _world.contact_mesh(P, forces, self.marker_radius(Vw), force_scale)
            pieces.append((V @ up.T, F, C))
        pieces = [p for p in pieces if len(p[1])]
        return _scene._merge(pieces) if pieces else None

    def marker_radius(self, Vw):
        """The contact markers' radius (:func:`screwdyn.viz.world.marker_radius`), fixed by the
        first configuration drawn with contacts."""
        if getattr(self, "_marker", None) is None:
            self._marker = _world.marker_radius(Vw[:self.robot_vertices] if self.robot_vertices else Vw)
        return self._marker

    def draw(self, Vw, cam: Camera, floor_z=None, span=None, extra=None) -> np.ndarray:
        """An ``(height, width, 3)`` uint8 image of the vertices ``Vw`` (from :meth:`vertices`), and
        the triangles ``extra = (V, F, C)`` (:meth:`extras`)."""
        faces, colors, face_part = self.faces, self.colors, self.face_part
        if extra is not None:
            V, F, C = extra
            faces = np.vstack([faces, F + len(Vw)])
            colors = np.vstack([colors, C[:, :3]])
            face_part = np.concatenate([face_part, np.full(len(F), len(self.parts))])
            Vw = np.vstack([Vw, V])
        if self.slope:
            floor_z = None
        s = self.ss
        H, W = self.height * s, self.width * s
        R = cam.rotation()
        f = cam.focal(H)
        pc = (Vw - np.asarray(cam.position)) @ R
        z = pc[:, 2]
        near = 1e-3
        with np.errstate(divide="ignore", invalid="ignore"):
            x = f * pc[:, 0] / z + 0.5 * W
            y = f * pc[:, 1] / z + 0.5 * H
            w = np.where(z > near, 1.0 / z, -1.0)
        zbuf = np.zeros((H, W))
        ids = np.full((H, W), -1, dtype=np.int64)
        rasterize(x, y, w, faces, zbuf, ids)

        img = np.empty((H, W, 3))
        img[:] = self.background
        if self.floor and floor_z is not None:
            self._draw_floor(img, zbuf, Vw[:len(Vw) - (0 if extra is None else len(extra[0]))], cam, R, f,
                             floor_z, span)
        out = np.empty((self.height, self.width, 3), dtype=np.uint8)
        compose(img, ids, self._shade(Vw, cam, R, faces, colors), face_part, self.outline, s, out)
        return out

    def _shade(self, Vw, cam, R, faces, colors):
        """RGB of each triangle: Lambert shading, both sides lit, lights fixed to the camera."""
        T = Vw[faces]
        n = np.cross(T[:, 1] - T[:, 0], T[:, 2] - T[:, 0])
        n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
        to_cam = np.asarray(cam.position) - T.mean(axis=1)
        n *= np.where(np.einsum("ij,ij->i", n, to_cam) < 0, -1.0, 1.0)[:, None]
        key, fill = (R @ (v / np.linalg.norm(v)) for v in (_KEY, _FILL))
        light = 0.30 + 0.62 * np.maximum(n @ key, 0) + 0.20 * np.maximum(n @ fill, 0)
        return np.clip(colors * light[:, None], 0, 1)

    def _draw_floor(self, img, zbuf, Vw, cam, R, f, floor_z, span):
        pos = np.asarray(cam.position, dtype=float)
        if pos[2] <= floor_z + 1e-6:
            return
        lo, hi = Vw.min(axis=0), Vw.max(axis=0)
        centre = 0.5 * (lo[:2] + hi[:2]) if span is None else span[0]
        size = max(float(np.max(hi[:2] - lo[:2])), float(hi[2] - floor_z), 0.2) if span is None else span[1]
        radius = 1.6 * size + 0.3
        shadow, x0, cell = self._shadow(Vw, floor_z, centre, radius)
        floor(img, zbuf, R, pos, f, float(floor_z), _scene.floor_tile(size), np.array(_FLOOR[0]), np.array(_FLOOR[1]),
              self.background, shadow, x0, cell, np.asarray(centre, dtype=float), radius)

    def _shadow(self, Vw, floor_z, centre, radius, n=320):
        """The robot's shadow on the floor from a light above: coverage of its triangles projected
        along the light, blurred: ``(grid (n, n) in [0, 1], corner (2,), cell size)``."""
        from scipy.ndimage import gaussian_filter

        L = np.array([0.25, 0.15, -1.0])   # the light's direction of travel
        L /= np.linalg.norm(L)
        s = (floor_z - Vw[:, 2]) / L[2]
        P = Vw[:, :2] + s[:, None] * L[:2]
        x0 = np.asarray(centre) - radius
        cell = 2 * radius / n
        zb = np.zeros((n, n))
        ids = np.full((n, n), -1, dtype=np.int64)
        rasterize((P[:, 0] - x0[0]) / cell, (P[:, 1] - x0[1]) / cell, np.ones(len(P)), self.faces, zb, ids)
        return gaussian_filter((ids >= 0).astype(float), sigma=1.5), x0, cell


def _floor_height(Vw):
    return min(0.0, float(Vw[:, 2].min()))


def _save_image(img, path):
    from PIL import Image

    Image.fromarray(img).save(str(path))


def render(model, q=None, path=None, *, camera=None, width=800, height=600, geometry="auto", frames=False,
           com=False, floor=True, outline=True, supersample=2, background=BACKGROUND, environment=None,
           contacts=None, forces=None, force_scale=None) -> np.ndarray:
    """A picture of ``model`` at configuration ``q`` (default: the zero configuration).

    Returns the image, ``(height, width, 3)`` uint8 RGB; with ``path``, also writes it (the
    format from the extension: .png, .jpg, ... through Pillow).

    ``camera``: a :class:`~screwdyn.viz.Camera`, or a dict of any of ``azimuth`` (degrees about
    z from +x, default -50), ``elevation`` (degrees, default 22), ``distance`` [m], ``target``
    (the point looked at), ``fov`` (vertical, degrees, default 35), or ``position`` with ``target``;
    what is left out is fitted so that the robot fills the image. ``geometry``: ``"auto"`` (the
    URDF visuals, or a stick figure with volume when the model has none), ``"visual"``,
    ``"skeleton"`` (:mod:`screwdyn.viz.scene`), ``"collision"`` (``model.collisions``). ``frames``:
    True (every frame) or frame names, drawn as red-green-blue axes; ``com``: mark the centre of mass.
    ``floor``: a checkered floor with the robot's shadow, at the environment's ground (a slope drawn
    as its plane). ``supersample``: antialiasing (the image is drawn that many times larger and
    averaged down).

    ``environment``: the :class:`~screwdyn.environment.Environment` drawn (default
    ``model.environment``; ``Environment()`` for none): its ground and obstacles. ``contacts``: the
    contacts to mark, a :class:`screwdyn.collision.Contacts` of this state (``screwdyn.detect``) or
    points ``(k, 3)``; ``forces``: their forces ``(k, 3)`` in the world frame [N], drawn as arrows
    ``force_scale`` m/N long (default: the largest 15 contact-marker radii).

    >>> import screwdyn
    >>> img = screwdyn.render(screwdyn.models.load("planar_2r"), [0.3, 0.6], width=64, height=48)
    >>> img.shape, img.dtype
    ((48, 64, 3), dtype('uint8'))
    """
    r = Renderer(model, geometry=geometry, frames=frames, com=com, width=width, height=height,
                 supersample=supersample, floor=floor, outline=outline, background=background,
                 environment=environment)
    if q is None:
        q = neutral(model)
    Vw = r.vertices(q)
    floor_z = r.floor_height(Vw)
    img = r.draw(Vw, r.camera(Vw, camera, floor_z), floor_z, extra=r.extras(Vw, contacts, forces, force_scale))
    if path is not None:
        _save_image(img, path)
    return img


def animate(model, trajectory, path, *, fps=25, speed=1.0, max_frames=600, camera=None, width=640, height=480,
            geometry="auto", frames=False, com=False, floor=True, outline=True, supersample=2,
            background=BACKGROUND, label=True, environment=None, contacts=None, forces=None,
            force_scale=None) -> int:
    """Write a video of ``model`` following ``trajectory`` (a :class:`~screwdyn.Trajectory`, or
    ``(t, q)`` with ``q`` of shape ``(N, nq)``) to ``path``: ``.gif`` (Pillow) or ``.mp4``
    (imageio with imageio-ffmpeg: ``pip install 'screwdyn[render]'``). ``speed`` > 1 plays faster
    than real time; at most ``max_frames`` frames. One camera for the whole video (fitted around
    every pose of the robot unless given); other options as :func:`render`. ``contacts``: a
    :class:`screwdyn.collision.Contacts` of the samples (``screwdyn.detect(model, q)`` of ``q
    (N, nq)``), and ``forces`` ``(N, K, 3)`` in the world frame; by default the trajectory's own
    ``contacts`` and ``contact_forces`` when it has them. Returns the number of frames written."""
    path = Path(path)
    ext = path.suffix.lower()
    if ext not in (".gif", ".mp4"):
        raise InputError(f"animation file must end in .gif or .mp4, got {path.name!r}")
    t, Q = _scene.samples(trajectory)
    if not (fps > 0 and speed > 0):
        raise InputError(f"fps and speed must be positive, got {fps!r} and {speed!r}")
    if ext == ".mp4":
        width, height = width + width % 2, height + height % 2   # H.264 wants even sizes
        try:
            import imageio.v2 as imageio
            import imageio_ffmpeg  # noqa: F401  (the ffmpeg binary imageio writes MP4 with)
        except ImportError:
            raise ImportError("writing .mp4 needs imageio and imageio-ffmpeg (pip install 'screwdyn[render]'); "
                              "write a .gif instead") from None
    times = np.arange(t[0], t[-1] + 1e-12, speed / fps)
    if len(times) > max_frames:
        times = np.linspace(t[0], t[-1], max_frames)
    idx = np.minimum(np.searchsorted(t, times - 1e-12), len(t) - 1)
    r = Renderer(model, geometry=geometry, frames=frames, com=com, width=width, height=height,
                 supersample=supersample, floor=floor, outline=outline, background=background,
                 environment=environment)
    contacts = getattr(trajectory, "contacts", None) if contacts is None else contacts
    forces = getattr(trajectory, "contact_forces", None) if forces is None else forces
    if contacts is not None and np.shape(contacts[1]) != (len(t),):
        raise InputError(f"contacts: a Contacts of the {len(t)} samples (count ({len(t)},)), got count of "
                         f"shape {np.shape(contacts[1])}")
    if forces is not None:
        forces = np.asarray(forces, dtype=float)
        if contacts is None or forces.shape != np.shape(contacts[0])[:2] + (3,):
            raise InputError("forces: (N, K, 3) with the contacts of the samples, "
                             f"got {forces.shape}")
        if force_scale is None:
            live = np.arange(forces.shape[1]) < np.asarray(contacts[1])[:, None]
            top = float(np.linalg.norm(forces, axis=2)[live].max()) if live.any() else 0.0
            force_scale = 15 * r.marker_radius(r.vertices(Q[0])) / top if top > 0 else 0.0
    # one camera and one floor for the whole video: fitted to the robot's poses along the way
    sample = idx[np.linspace(0, len(idx) - 1, min(len(idx), 24)).astype(int)]
    clouds = [r.vertices(Q[k]) for k in sample]
    step = max(1, len(clouds[0]) // 4000)
    pts = np.vstack([c[::step] for c in clouds])
    floor_z = r.floor_z if r.floor_z is not None else min(_floor_height(c) for c in clouds)
    cam = r.camera(pts, camera, floor_z)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    span = (0.5 * (lo[:2] + hi[:2]), max(float(np.max(hi[:2] - lo[:2])), float(hi[2] - floor_z), 0.2))
    from PIL import Image, ImageDraw

    images = []
    writer = imageio.get_writer(str(path), fps=fps, codec="libx264", quality=7, macro_block_size=2) \
        if ext == ".mp4" else None
    try:
        for k, i in enumerate(idx):
            Vw = r.vertices(Q[i])
            extra = r.extras(Vw, None if contacts is None else (contacts[0][i], contacts[1][i]),
                             None if forces is None else forces[i][:min(int(contacts[1][i]), forces.shape[1])],
                             force_scale, span)
            img = r.draw(Vw, cam, floor_z, span, extra)
            if label:
                im = Image.fromarray(img)
                ImageDraw.Draw(im).text((8, 6), f"{model.name}   t = {t[i]:.2f} s", fill=(40, 40, 40))
                img = np.asarray(im)
            if writer is not None:
                writer.append_data(img)
            else:
                images.append(Image.fromarray(img).convert("P", palette=Image.Palette.ADAPTIVE, colors=255))
    finally:
        if writer is not None:
            writer.close()
    if images:
        images[0].save(str(path), save_all=True, append_images=images[1:], duration=round(1000 / fps),
                       loop=0)
    return len(idx)
