"""Pictures without a display (screwdyn.viz: scene, camera, raster, renderer): the robot's
silhouette against its meshes projected independently (trimesh reading the files, poses from
frame_pose, a pinhole projection written here), stick figures of bundled robots, videos, and what
happens to meshes that cannot be drawn."""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import screwdyn
from screwdyn.errors import InputError
from screwdyn.geometry import VisualWarning
from screwdyn.viz import Camera, animate, render
from screwdyn.viz.scene import capsule, cylinder, sphere, up_rotation

MAGENTA = (1.0, 0.0, 1.0)   # a background no robot part is shaded to


def project(P, cam_position, cam_target, fov, width, height, up=(0, 0, 1)):
    """Pinhole projection written out independently: look-at axes, then u = f x / z + W / 2."""
    z = np.subtract(cam_target, cam_position)
    z = z / np.linalg.norm(z)
    x = np.cross(z, up)
    x = x / np.linalg.norm(x)
    y = np.cross(z, x)
    d = P - np.asarray(cam_position)
    xc, yc, zc = d @ x, d @ y, d @ z
    f = height / 2 / np.tan(np.radians(fov) / 2)
    return f * xc / zc + width / 2, f * yc / zc + height / 2, zc


def robot_mask(img):
    return np.any(img != np.round(np.array(MAGENTA) * 255).astype(np.uint8), axis=2)


def dilate(mask):
    out = mask.copy()
    out[1:] |= mask[:-1]
    out[:-1] |= mask[1:]
    out[:, 1:] |= out[:, :-1].copy()
    out[:, :-1] |= out[:, 1:].copy()
    return out


def oracle_meshes(model, q):
    """Each visual as world triangles ``(F, 3, 3)``: trimesh reads the file (or builds the primitive),
    the URDF scale, then ``frame_pose(model, q, link) @ origin``."""
    trimesh = pytest.importorskip("trimesh", reason="reading robot meshes needs trimesh (screwdyn[render])")
    out = []
    for v in model.visuals:
        if v.kind == "mesh" and v.vertices is not None:
            m = trimesh.Trimesh(v.vertices * v.size, v.faces, process=False)
            V = np.asarray(m.vertices)
        elif v.kind == "mesh":
            m = trimesh.load(v.path, force="mesh")
            V = np.asarray(m.vertices) * v.size
        elif v.kind == "capsule":
            m = trimesh.creation.capsule(height=v.size[1], radius=v.size[0], count=[32, 32])
            V = np.asarray(m.vertices)
        elif v.kind == "ellipsoid":
            m = trimesh.creation.icosphere(subdivisions=3, radius=1.0)
            V = np.asarray(m.vertices) * v.size
        elif v.kind == "box":
            m = trimesh.creation.box(extents=v.size)
            V = np.asarray(m.vertices)
        elif v.kind == "cylinder":
            m = trimesh.creation.cylinder(radius=v.size[0], height=v.size[1], sections=64)
            V = np.asarray(m.vertices)
        else:
            m = trimesh.creation.icosphere(subdivisions=3, radius=v.size[0])
            V = np.asarray(m.vertices)
        T = screwdyn.frame_pose(model, q, v.link) @ v.origin
        out.append((V @ T[:3, :3].T + T[:3, 3])[np.asarray(m.faces)])
    return out


ROBOT_POSES = {   # a known pose of each: its joints at fixed fractions of their ranges, or its home pose
    "panda": 0.35, "ur5": 0.6, "talos_full_v2": 0.45, "solo": 0.3, "solo12": "home", "mjcf:humanoid": 0.4,
}


@pytest.mark.parametrize("name", list(ROBOT_POSES))
def test_silhouette_matches_the_meshes_projected(name):
    """example-robot-data robots with their meshes (and the bundled solo12, on a floating base, with
    example-robot-data's): every mesh vertex projected into the image lands on robot pixels, and the
    silhouette is the union of the projected triangles (filled by Pillow's polygon drawing) to within
    a pixel."""
    pytest.importorskip("trimesh", reason="reading robot meshes needs trimesh (screwdyn[render])")
    if name in ("panda", "ur5"):
        pytest.importorskip("collada", reason="the Panda and UR5 meshes are COLLADA: pycollada")
    from PIL import Image, ImageDraw

    from screwdyn.io import example_robot_data_path, load_urdf

    if ROBOT_POSES[name] == "home":
        model, q = screwdyn.models.load(name), screwdyn.models.home(name)
        assert model.is_floating and all(v.path for v in model.visuals)
    elif name.startswith("mjcf:"):      # gymnasium's MuJoCo humanoid: capsules and spheres of MJCF geoms
        pytest.importorskip("mujoco", reason="MJCF needs MuJoCo (pip install 'screwdyn[mjcf]')")
        gym = pytest.importorskip("gymnasium", reason="gymnasium's MuJoCo models")
        from pathlib import Path

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = screwdyn.load_mjcf(Path(gym.__file__).parent / "envs/mujoco/assets/humanoid.xml")
        q = screwdyn.neutral(model)
        lo, hi = model.q_lower[7:], model.q_upper[7:]
        q[7:] = lo + ROBOT_POSES[name] * (hi - lo)
        assert {v.kind for v in model.visuals} == {"capsule", "sphere"}
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)   # mimic joints
            model = load_urdf(example_robot_data_path(name))
        lo = np.where(np.isfinite(model.q_lower), model.q_lower, -np.pi)
        hi = np.where(np.isfinite(model.q_upper), model.q_upper, np.pi)
        q = lo + ROBOT_POSES[name] * (hi - lo)
    W, H = 200, 150
    tris = oracle_meshes(model, q)
    pts = np.vstack([t.reshape(-1, 3) for t in tris])
    centre = 0.5 * (pts.min(axis=0) + pts.max(axis=0))
    size = np.linalg.norm(pts.max(axis=0) - pts.min(axis=0))
    cam = Camera(centre + size * np.array([1.1, -1.4, 0.7]), centre, fov=40.0)
    img = render(model, q, camera=cam, width=W, height=H, floor=False, background=MAGENTA)
    assert img.shape == (H, W, 3)
    mask = robot_mask(img)

    # every vertex (a sample of them) that falls in the image is on the robot
    rng = np.random.default_rng(7)
    sample = pts[rng.choice(len(pts), size=min(len(pts), 3000), replace=False)]
    u, v, z = project(sample, cam.position, cam.target, cam.fov, W, H)
    inside = (z > 0) & (u >= 0) & (u < W) & (v >= 0) & (v < H)
    assert inside.mean() > 0.95
    hits = mask[v[inside].astype(int), u[inside].astype(int)]
    near = dilate(mask)[v[inside].astype(int), u[inside].astype(int)]
    # on the pixel itself, or (a vertex on the silhouette; a primitive's facets inside its true
    # surface) within one pixel of it
    assert hits.mean() > 0.95 and near.all(), (hits.mean(), near.mean())

    # the silhouette: the projected triangles filled independently
    sil = Image.new("1", (W, H), 0)
    draw = ImageDraw.Draw(sil)
    for t in tris:
        uu, vv, zz = project(t.reshape(-1, 3), cam.position, cam.target, cam.fov, W, H)
        uv = np.stack([uu, vv], axis=1).reshape(-1, 6) - 0.5   # Pillow puts pixel centres on integers
        for tri in uv[(zz.reshape(-1, 3) > 0).all(axis=1)].tolist():
            draw.polygon(tri, fill=1)
    oracle = np.asarray(sil, dtype=bool)
    assert mask.sum() > 0.04 * W * H
    # within a pixel (Pillow fills every pixel a polygon's edge touches: slivers seen edge-on spill)
    assert (mask & ~dilate(oracle)).sum() <= 0.005 * mask.sum()     # no robot where no mesh
    assert (oracle & ~dilate(mask)).sum() <= 0.005 * oracle.sum()   # no mesh left out
    iou = (mask & oracle).sum() / (mask | oracle).sum()   # Pillow fills the pixels its edges touch too
    assert iou > 0.85, iou


def test_bundled_robot_without_meshes_or_trimesh(monkeypatch):
    """A bundled robot (no <visual>) is drawn as a stick figure with volume, with NumPy alone: every
    body origin (a joint) and the tool frame project onto robot pixels, the joints in their colour."""
    monkeypatch.setitem(sys.modules, "trimesh", None)     # import trimesh fails
    model = screwdyn.models.load("panda")
    q = screwdyn.models.home("panda")
    cam = Camera.orbit((0.3, 0.0, 0.45), 2.4, azimuth=-60, elevation=20)
    W, H = 160, 120
    img = render(model, q, camera=cam, width=W, height=H, floor=False, background=MAGENTA)
    mask = robot_mask(img)
    T = screwdyn.forward_kinematics(model, q)
    P = np.array([T[model.frame_index(n)][:3, 3] for n in (*model.link_names, "panda_hand")])
    u, v, _ = project(P, cam.position, cam.target, cam.fov, W, H)
    assert mask[v.astype(int), u.astype(int)].all()
    c = img.astype(int)
    orange = (c[..., 0] > c[..., 1] + 30) & (c[..., 1] > c[..., 2] + 30)
    assert orange[v[:7].astype(int), u[:7].astype(int)].sum() >= 5      # most joint centres in joint colour
    assert 0.03 < mask.mean() < 0.5


def test_meshes_without_trimesh_warn_once_and_draw_the_stick_figure(monkeypatch):
    from screwdyn.viz.scene import _read_mesh_cached, parts

    monkeypatch.setitem(sys.modules, "trimesh", None)
    _read_mesh_cached.cache_clear()
    model = screwdyn.models.load("solo12")            # bundled; its meshes are example-robot-data's STL files
    with pytest.warns(VisualWarning, match="needs trimesh") as rec:
        names = {p.name for p in parts(model)}
    assert len(rec) == 1                              # once, not once per mesh
    assert any(n.endswith("/joint") for n in names) and not any("/visual_" in n for n in names)
    _read_mesh_cached.cache_clear()


def test_render_writes_png_and_defaults(tmp_path):
    """Defaults: zero configuration, a fitted camera, a floor; the file is the returned image."""
    from PIL import Image

    model = screwdyn.models.load("ur5")
    img = render(model, path=tmp_path / "ur5.png", width=96, height=72)
    back = np.asarray(Image.open(tmp_path / "ur5.png"))
    np.testing.assert_array_equal(back, img)
    assert img.shape == (72, 96, 3) and img.dtype == np.uint8
    floor = render(model, width=96, height=72, floor=True)
    bare = render(model, width=96, height=72, floor=False)
    assert (floor != bare).any(axis=2).mean() > 0.2          # the floor covers the lower image
    assert (render(model, width=96, height=72, com=True, frames=["tool0"]) != floor).any()


def test_render_options_are_checked():
    model = screwdyn.models.load("planar_2r")
    with pytest.raises(InputError, match="unknown keys"):
        render(model, camera={"azimut": 3}, width=32, height=32)
    with pytest.raises(InputError, match="width"):
        render(model, width=0)
    with pytest.raises(InputError, match="q must|shape"):
        render(model, np.zeros(3), width=32, height=32)
    with pytest.raises(ValueError, match="geometry"):
        render(model, geometry="mesh", width=32, height=32)
    with pytest.raises(InputError, match="along 'up'"):
        Camera((0, 0, 5), (0, 0, 0))


def test_camera_convention():
    cam = Camera.orbit((1.0, 2.0, 0.5), 3.0, azimuth=30.0, elevation=20.0, fov=50.0)
    az, el = np.radians(30), np.radians(20)
    np.testing.assert_allclose(cam.position, [1 + 3 * np.cos(el) * np.cos(az), 2 + 3 * np.cos(el) * np.sin(az),
                                              0.5 + 3 * np.sin(el)], atol=1e-12)
    P = np.array([cam.target, np.add(cam.target, (0, 0, 0.3)), np.add(cam.target, (0.1, -0.2, 0.05))])
    np.testing.assert_allclose(np.stack(cam.project(P, 320, 240)), np.stack(project(P, cam.position, cam.target,
                                                                                     50.0, 320, 240)), atol=1e-9)
    u, v, z = cam.project(P, 320, 240)
    assert (u[0], v[0]) == pytest.approx((160, 120)) and v[1] < 120 and z[0] == pytest.approx(3.0)
    pts = np.random.default_rng(1).normal(size=(200, 3)) * [0.3, 0.1, 0.6]
    fit = Camera.fit(pts, 200, 100, azimuth=-50, elevation=22)
    u, v, _ = fit.project(pts, 200, 100)
    assert u.min() >= 0 and u.max() <= 200 and v.min() >= 0 and v.max() <= 100
    assert max((u.max() - u.min()) / 200, (v.max() - v.min()) / 100) == pytest.approx(0.86, abs=0.02)


def test_gravity_is_down_in_pictures():
    for g in [(0, 0, -9.81), (0, -9.81, 0), (3.0, 1.0, -2.0), (0, 0, 9.81)]:
        R = up_rotation(screwdyn.models.load("planar_2r").with_gravity(g))
        np.testing.assert_allclose(R @ (-np.asarray(g) / np.linalg.norm(g)), [0, 0, 1], atol=1e-12)
        np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-12)
        assert np.linalg.det(R) == pytest.approx(1.0)


def test_primitives_are_closed_surfaces():
    """Closed meshes: every edge shared by exactly two triangles; volumes as the formulas."""
    for (V, F, _), volume in ((cylinder(0.2, 0.5, segments=64), np.pi * 0.04 * 0.5),
                              (sphere(0.3, segments=64), 4 / 3 * np.pi * 0.027),
                              (capsule((0, 0, 0), (0.3, 0.4, 0), 0.1, segments=64),
                               np.pi * 0.01 * 0.5 + 4 / 3 * np.pi * 0.001)):
        edges = np.sort(np.concatenate([F[:, [0, 1]], F[:, [1, 2]], F[:, [2, 0]]]), axis=1)
        _, counts = np.unique(edges, axis=0, return_counts=True)
        assert (counts == 2).all()
        vol = abs(np.einsum("ij,ij->i", V[F[:, 0]], np.cross(V[F[:, 1]], V[F[:, 2]])).sum()) / 6
        assert vol == pytest.approx(volume, rel=0.01)


def test_unreadable_and_missing_meshes_warn_and_the_rest_is_drawn(tmp_path):
    """A mesh not found (load_urdf warns), one unreadable (the drawing warns): the rest is drawn.
    When not one of the meshes is found, the default draws the stick figure instead of the few
    primitives left (a robot whose mesh package is not installed)."""
    trimesh = pytest.importorskip("trimesh", reason="reading mesh files needs trimesh")
    from screwdyn.viz.scene import parts

    (tmp_path / "broken.stl").write_bytes(b"\x00not a mesh at all" * 3)
    trimesh.creation.icosphere(radius=0.1).export(tmp_path / "ball.stl")
    doc = ('<robot name="r"><link name="b"/><link name="a"><inertial><mass value="1"/><inertia ixx="0.01" '
           'ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>'
           '<visual><geometry><mesh filename="broken.stl"/></geometry></visual>'
           '<visual><geometry><mesh filename="package://nowhere/x.stl"/></geometry></visual>'
           '<visual><origin xyz="0 0 0.2"/><geometry><box size="0.1 0.1 0.4"/></geometry></visual>'
           '<visual><origin xyz="0 0 0.5"/><geometry><mesh filename="ball.stl"/></geometry></visual></link>'
           '<joint name="j" type="revolute"><parent link="b"/><child link="a"/></joint></robot>')
    (tmp_path / "r.urdf").write_text(doc)
    with pytest.warns(VisualWarning, match="not found"):
        model = screwdyn.load_urdf(tmp_path / "r.urdf")
    with pytest.warns(VisualWarning, match="broken.stl' cannot be read"):
        img = render(model, width=64, height=64, floor=False, background=MAGENTA)
    assert robot_mask(img).mean() > 0.05
    with pytest.warns(VisualWarning):
        assert [p.name for p in parts(model)] == ["a/visual_2", "a/visual_3"]
    (tmp_path / "ball.stl").unlink()                      # now no mesh is found
    with pytest.warns(VisualWarning):
        bare = screwdyn.load_urdf(tmp_path / "r.urdf")
    with pytest.warns(VisualWarning):
        assert {p.name for p in parts(bare)} == {"b/base", "a/joint"}               # the skeleton
    with pytest.warns(VisualWarning):
        assert [p.name for p in parts(bare, "visual")] == ["a/visual_2"]          # asked for: the box


def test_animation_gif_and_mp4(tmp_path):
    from PIL import Image

    model = screwdyn.models.load("planar_2r")
    t = np.linspace(0, 1, 21)
    Q = np.stack([np.sin(2 * t), np.cos(3 * t)], axis=1)
    n = animate(model, (t, Q), tmp_path / "a.gif", fps=8, width=64, height=48)
    assert n == 9
    gif = Image.open(tmp_path / "a.gif")
    assert gif.n_frames == n and gif.size == (64, 48)
    frames = []
    for k in (0, n - 1):
        gif.seek(k)
        frames.append(np.asarray(gif.convert("RGB"), dtype=int))
    assert np.abs(frames[0] - frames[1]).sum(axis=2).astype(bool).mean() > 0.01   # the robot moved
    with pytest.raises(InputError, match=".gif or .mp4"):
        animate(model, (t, Q), tmp_path / "a.avi")
    pytest.importorskip("imageio_ffmpeg", reason="MP4 needs imageio-ffmpeg (screwdyn[render])")
    import imageio.v2 as imageio

    n = animate(model, (t, Q), tmp_path / "a.mp4", fps=8, width=63, height=48, label=False)
    reader = imageio.get_reader(tmp_path / "a.mp4")
    assert reader.count_frames() == n and reader.get_data(0).shape == (48, 64, 3)


def test_cli_render_picture_and_video(tmp_path, capsys):
    from PIL import Image

    from screwdyn.cli import main

    png = tmp_path / "ur5.png"
    assert main(["render", "ur5", "--q", "0", "-pi/2", "0", "0", "0", "0", "-o", str(png), "--width", "80",
                 "--height", "60", "--azimuth", "30", "--com"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and "wrote" in capsys.readouterr().out
    np.testing.assert_array_equal(
        np.asarray(Image.open(png)),
        render(screwdyn.models.load("ur5"), [0, -np.pi / 2, 0, 0, 0, 0], width=80, height=60,
               camera={"azimuth": 30.0}, com=True))
    traj = screwdyn.simulate(screwdyn.models.load("pendulum"), np.array([1.0]), np.zeros(1), duration=0.2, dt=0.01)
    traj.to_npz(tmp_path / "p.npz")
    gif = tmp_path / "p.gif"
    assert main(["render", "pendulum", "--trajectory", str(tmp_path / "p.npz"), "--animate", str(gif),
                 "--fps", "10", "--width", "48", "--height", "40"]) == 0
    assert gif.read_bytes()[:6] == b"GIF89a"
    assert main(["render", "pendulum", "--animate", str(gif)]) == 2
    assert "--animate needs --trajectory" in capsys.readouterr().err


def test_ground_obstacles_contacts_and_collision_geometry(tmp_path):
    """A cube resting on a ground 0.2 m up, beside a box obstacle: the floor is drawn at the
    ground's height (where the cube's contacts are); the obstacle, the contact markers and the force
    arrows are drawn in their colours; the collision geometry on request; a tilted ground as a
    checkered slab; an animation takes the contacts of its samples."""
    from screwdyn.environment import Box, Environment, Ground
    from screwdyn.geometry import Collision
    from screwdyn.viz import world
    from screwdyn.viz.renderer import Renderer

    b = screwdyn.ModelBuilder("cube")
    b.add_body("cube", "base", "free", "free_flyer", mass=1.0, inertia=np.eye(3) * 1e-2)
    model = b.build().replace(collisions=(Collision("cube", "box", np.eye(4), (0.2, 0.2, 0.2)),))
    env = Environment(Ground(height=0.2), Box((0.5, 0, 0.3), (0.2, 0.4, 0.2)))
    q = np.r_[0.0, 0.0, 0.3, 0, 0, 0, 1]
    c = screwdyn.detect(model, q, env)
    assert c.count == 4 and np.allclose(c.dist[:4], 0) and np.allclose(c.pos[:4, 2], 0.2)
    r = Renderer(model, geometry="collision", environment=env, width=160, height=120, background=MAGENTA)
    assert r.floor_height(r.vertices(q)) == 0.2
    view = dict(width=240, height=180, background=MAGENTA, camera=dict(azimuth=-90, elevation=20.0, target=(0.2, 0, 0.3),
                                                                       distance=1.5))
    alone = render(model, q, geometry="collision", environment=Environment(Ground(height=0.2)), **view)
    img = render(model, q, geometry="collision", environment=env, contacts=c, forces=np.tile([-2.5, 0.0, 0.0], (4, 1)),
                 **view)

    def near(color, tol=90):
        return np.abs(img.astype(int) - np.round(np.array(color[:3]) * 255)).sum(axis=2) < tol

    assert np.count_nonzero(np.any(img != alone, axis=2)) > 300      # the obstacle, the markers, the arrows
    assert near(world.CONTACT_COLOR, 150).any() and near(world.FORCE_COLOR, 150).any()
    assert near(world.COLLISION_COLOR, 150).sum() > 200
    slope = render(model, q, environment=Environment(Ground(height=0.2, normal=(0.2, 0, 1))), width=80, height=60,
                   background=MAGENTA, geometry="collision")
    assert robot_mask(slope).mean() > 0.5       # the slab fills the picture around the cube
    t = np.array([0.0, 0.1])
    Q = np.stack([q, q + [0, 0, 0.1, 0, 0, 0, 0]])
    cs = screwdyn.detect(model, Q, env)
    assert cs.count.tolist() == [4, 0]
    F = np.zeros(cs.data.shape[:2] + (3,))
    F[0, :4, 2] = 2.5
    assert animate(model, (t, Q), tmp_path / "rest.gif", environment=env, contacts=cs, forces=F, width=64,
                   height=48, fps=10) == 2
