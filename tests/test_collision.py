"""Collision detection (screwdyn.collision, algorithms/collide.py, narrowphase.py, boxbox.py, gjk.py):
closed forms, MuJoCo's mj_collision on the same scenes, coal's GJK/EPA on polytopes, the geometry
of example-robot-data robots against Pinocchio's GeometryModel, the layout's promises."""
from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import screwdyn
from screwdyn.algorithms import collide as C
from screwdyn.collision import collider, detect
from screwdyn.environment import Box, Capsule, Cylinder, Environment, Ground, Sphere
from screwdyn.errors import CollisionWarning, InputError, ModelError
from screwdyn.geometry import Collision
from screwdyn.io.collisions import convex_hull

mujoco = pytest.importorskip("mujoco")

CUBE = np.array([[x, y, z] for x in (-.1, .1) for y in (-.1, .1) for z in (-.1, .1)])


def free_bodies(*shapes):
    """A model of free bodies b0, b1, ... each carrying one Collision given as (kind, size, extra)."""
    b = screwdyn.ModelBuilder("free")
    cols = []
    for i, (kind, size, extra) in enumerate(shapes):
        b.add_body(f"b{i}", "base", f"f{i}", "free_flyer", mass=1.0, inertia=np.eye(3) * 1e-2)
        cols.append(Collision(f"b{i}", kind, np.eye(4), size, **extra))
    return b.build().replace(collisions=tuple(cols))


def pose(x, R=None):
    """A free-flyer's q block: position x, rotation R (scalar-last quaternion)."""
    from scipy.spatial.transform import Rotation
    return np.r_[x, Rotation.from_matrix(np.eye(3) if R is None else R).as_quat()]


def rot(axis, angle):
    from scipy.spatial.transform import Rotation
    return Rotation.from_rotvec(np.asarray(axis, float) * angle).as_matrix()


def rows(c):
    return c.data[:min(int(c.count), c.data.shape[0])]


# ---------------------------------------------------------------------------- closed forms
def test_shapes_resting_on_a_slope_touch_it_where_the_geometry_says():
    """Against a ground tilted by 0.3 rad about x: each shape held just into it, every contact's
    normal the slope's, its distance the depth put in, its point on the shape's lowest features,
    the frame orthonormal and right-handed; the candidate pairs compile the 'ground' kernel."""
    n = rot([1, 0, 0], 0.3) @ [0, 0, 1]
    ground = Ground(height=0.2, normal=n, friction=0.7)
    p0 = np.array([0, 0, 0.2])
    R = rot([1, 0, 0], 0.3)
    depth = 1e-3
    V, F = convex_hull(CUBE)
    model = free_bodies(("sphere", (0.1,), {}), ("capsule", (0.05, 0.3), {}), ("box", (0.2, 0.2, 0.2), {}),
                        ("cylinder", (0.1, 0.2), {}), ("convex", (), {"vertices": V, "faces": F}))
    lift = {0: 0.1, 1: 0.05, 2: 0.1, 3: 0.1, 4: 0.1}      # centre above the slope when touching
    lying = R @ rot([0, 1, 0], np.pi / 2)                 # the capsule along the slope
    q = np.concatenate([pose(p0 + 2 * i * R[:, 0] + (lift[i] - depth) * n, lying if i == 1 else R) for i in range(5)])
    col = collider(model, Environment(ground))
    assert col.tier == "ground"
    c = detect(model, q, Environment(ground))
    got = {i: [] for i in range(5)}
    for r in rows(c):
        got[int(r[C.BODY_A])].append(r)
        assert r[C.BODY_B] == -1 and r[C.GEOM_B] == -1
        np.testing.assert_allclose(r[C.NORMAL:C.NORMAL + 3], n, atol=1e-15)
        np.testing.assert_allclose(r[C.DIST], -depth, atol=1e-15)
        F = r[C.NORMAL:C.TANGENT2 + 3].reshape(3, 3)
        np.testing.assert_allclose(F @ F.T, np.eye(3), atol=1e-15)
        assert np.linalg.det(F) > 0
        assert r[C.MU] == 0.7 and r[C.RESTITUTION] == 0.0 and r[C.CONDIM] == 3
        np.testing.assert_allclose((r[C.POS:C.POS + 3] - p0) @ n, -depth / 2, atol=1e-15)   # midway
    assert [len(got[i]) for i in range(5)] == [1, 2, 4, 3, 4]   # a standing cylinder: 3 points of its rim
    for i in (2, 4):                    # a cube resting on its face: the four corners of that face
        P = np.array([r[C.POS:C.POS + 3] for r in got[i]])
        centre = p0 + 2 * i * R[:, 0] - depth / 2 * n
        np.testing.assert_allclose(np.sort(np.abs((P - centre) @ R[:, :2]), axis=0), 0.1, atol=1e-12)


def test_pairs_in_closed_form():
    """Sphere-sphere distance and point; crossing capsules; a box on a box (the top box's bottom
    corners, four); a cube polytope on a box by EPA (its depth)."""
    model = free_bodies(("sphere", (0.1,), {}), ("sphere", (0.2,), {"margin": 0.1}))
    q = np.r_[pose([0, 0, 0]), pose([0.35, 0, 0])]
    (r,) = rows(detect(model, q, Environment(), self_collision=True))
    assert r[C.BODY_A] == 1 and r[C.BODY_B] == 0
    np.testing.assert_allclose(r[C.DIST], 0.05, atol=1e-15)
    np.testing.assert_allclose(r[C.NORMAL:C.NORMAL + 3], [1, 0, 0])
    np.testing.assert_allclose(r[C.POS:C.POS + 3], [0.125, 0, 0], atol=1e-15)
    assert r[C.MARGIN] == 0.1

    model = free_bodies(("capsule", (0.05, 1.0), {}), ("capsule", (0.05, 1.0), {}))
    q = np.r_[pose([0, 0, 0], rot([0, 1, 0], np.pi / 2)), pose([0.2, 0.3, 0.09], rot([1, 0, 0], np.pi / 2))]
    (r,) = rows(detect(model, q, Environment(), self_collision=True))
    np.testing.assert_allclose(r[C.DIST], -0.01, atol=1e-15)
    np.testing.assert_allclose(r[C.POS:C.POS + 3], [0.2, 0, 0.045], atol=1e-15)

    model = free_bodies(("box", (1.0, 1.0, 0.2), {}), ("box", (0.2, 0.2, 0.2), {}))
    q = np.r_[pose([0, 0, 0]), pose([0.1, 0.2, 0.199], rot([0, 0, 1], 0.4))]
    c = detect(model, q, Environment(), self_collision=True)
    assert c.count == 4
    np.testing.assert_allclose(c.dist[:4], -1e-3, atol=1e-15)
    np.testing.assert_allclose(c.normal[:4], np.tile([0, 0, 1], (4, 1)), atol=1e-15)

    V, F = convex_hull(CUBE)
    model = free_bodies(("box", (1.0, 1.0, 0.2), {}), ("convex", (), {"vertices": V, "faces": F}))
    col = collider(model, Environment(), self_collision=True)
    assert col.tier == "general"
    c = detect(model, q, Environment(), self_collision=True)
    assert c.count == 1
    np.testing.assert_allclose(c.dist[0], -1e-3, atol=1e-15)
    np.testing.assert_allclose(c.normal[0], [0, 0, 1], atol=1e-15)


# ---------------------------------------------------------------------------- against MuJoCo
SCENE = """<mujoco><option><flag gravity="disable"/></option><worldbody>
  <geom name="floor" type="plane" size="5 5 .1" friction="0.8 0.01 0.001" solref="0.01 1" contype="3" conaffinity="3"/>
  <body name="ball"><freejoint/><geom name="ball" type="sphere" size="0.1" contype="3" conaffinity="3"
    priority="1" friction="0.5 0.005 0.0001"/></body>
  <body name="pill"><freejoint/><geom name="pill" type="capsule" size="0.05 0.12" solmix="3"/></body>
  <body name="pill2"><freejoint/><geom name="pill2" type="capsule" size="0.04 0.1"/></body>
  <body name="brick"><freejoint/><geom name="brick" type="box" size="0.1 0.07 0.05" margin="0.01" gap="0.005"/></body>
  <body name="brick2"><freejoint/><geom name="brick2" type="box" size="0.08 0.08 0.06" condim="4"/></body>
  <body name="drum"><freejoint/><geom name="drum" type="cylinder" size="0.08 0.1" contype="2" conaffinity="2"/></body>
</worldbody></mujoco>"""


def mujoco_contacts(m, d, model):
    """MuJoCo's contacts as (geom names) -> list of (pos, normal from the geom named second into the
    one named first, dist, friction, solref, solimp, margin, condim), named as screwdyn's A, B."""
    out = {}
    for i in range(d.ncon):
        con = d.contact[i]
        g1, g2 = m.geom(con.geom1).name, m.geom(con.geom2).name
        out.setdefault(frozenset((g1, g2)), []).append((g1, g2, con))
    return out


def test_primitive_pairs_equal_mujoco(rng):
    """Random poses of a sphere, two capsules, two boxes and a cylinder over MuJoCo's floor (bit masks:
    the cylinder meets only the sphere and the floor): every contact MuJoCo finds for the pairs it
    solves in closed form (not capsule-box, a heuristic of its own) is screwdyn's, to 1e-9 in point,
    normal and distance, with MuJoCo's mixed friction, solref, solimp, margin and condim; box-box
    pairs of more than four contacts keep four of MuJoCo's."""
    m = mujoco.MjModel.from_xml_string(SCENE)
    d = mujoco.MjData(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = screwdyn.load_mjcf(SCENE)
    assert collider(model, self_collision=True).tier == "general"
    names = [c.name for c in model.collisions]
    compared = {}
    for _ in range(120):
        qpos = np.zeros(m.nq)
        for k in range(6):
            qpos[7 * k:7 * k + 3] = rng.normal(size=3) * 0.09 + [0, 0, 0.06]
            quat = rng.normal(size=4)
            qpos[7 * k + 3:7 * k + 7] = quat / np.linalg.norm(quat)
        d.qpos[:] = qpos
        mujoco.mj_forward(m, d)
        q = screwdyn.from_mujoco(model, qpos, np.zeros(m.nv))[0]
        c = detect(model, q, self_collision=True, max_contacts=64)
        ours = {}
        for r in rows(c):
            a = names[int(r[C.GEOM_A])]
            b = names[int(r[C.GEOM_B])] if r[C.GEOM_B] >= 0 else model.environment.obstacles[-1 - int(r[C.GEOM_B])].name
            ours.setdefault(frozenset((a, b)), []).append((a, r))
        theirs = mujoco_contacts(m, d, model)
        assert set(ours) == set(theirs)
        for key, cons in theirs.items():
            if key & {"pill", "pill2"} and key & {"brick", "brick2"}:
                continue
            mine = ours[key]
            assert len(mine) == len(cons) or (key == frozenset(("brick", "brick2")) and len(mine) == 4 < len(cons))
            for a, r in mine:
                best = min(cons, key=lambda x: np.linalg.norm(x[2].pos - r[C.POS:C.POS + 3]))
                g1, g2, con = best
                sign = 1.0 if g2 == a else -1.0          # MuJoCo's normal points from geom1 into geom2
                np.testing.assert_allclose(r[C.POS:C.POS + 3], con.pos, atol=1e-9)
                np.testing.assert_allclose(r[C.NORMAL:C.NORMAL + 3], sign * con.frame[:3], atol=1e-9)
                np.testing.assert_allclose(r[C.DIST], con.dist, atol=1e-9)
                np.testing.assert_allclose(r[C.MU:C.ROLLING + 1], con.friction[[0, 2, 3]], rtol=1e-15)
                np.testing.assert_allclose(r[C.SOLREF:C.SOLREF + 2], con.solref, rtol=1e-12)
                np.testing.assert_allclose(r[C.SOLIMP:C.SOLIMP + 5], con.solimp, rtol=1e-12)
                assert r[C.MARGIN] == pytest.approx(con.includemargin) and r[C.CONDIM] == con.dim
                compared[key] = compared.get(key, 0) + 1
    kinds = {frozenset(k) for k in compared}
    assert len(kinds) == 13, kinds     # every pair of the scene but capsule-box was met


def test_humanoid_on_its_floor_equals_mujoco():
    """gymnasium's humanoid lying in its floor, its limbs crossed: with self-collision, MuJoCo's
    contact set (floor and body-body pairs, its parent filter through the multi-joint bodies)."""
    import glob
    paths = glob.glob(str(__import__("pathlib").Path(__import__("gymnasium").__file__).parent
                          / "envs" / "mujoco" / "assets" / "humanoid.xml")) if _has("gymnasium") else []
    if not paths:
        pytest.skip("gymnasium (its humanoid.xml) is not installed")
    m = mujoco.MjModel.from_xml_path(paths[0])
    d = mujoco.MjData(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = screwdyn.load_mjcf(paths[0])
    assert isinstance(model.environment.ground, Collision) and model.environment.ground.name == "floor"
    qpos = m.qpos0.copy()
    qpos[2] = 0.12
    qpos[7:] = np.random.default_rng(1).uniform(m.jnt_range[1:, 0], m.jnt_range[1:, 1])
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    q = screwdyn.from_mujoco(model, qpos, np.zeros(m.nv))[0]
    c = detect(model, q, self_collision=True)
    assert c.count == d.ncon > 20
    pos = np.array([d.contact[i].pos for i in range(d.ncon)])
    dist = np.array([d.contact[i].dist for i in range(d.ncon)])
    order = np.lexsort(pos.T)
    mine = rows(c)
    mo = np.lexsort(mine[:, C.POS:C.POS + 3].T)
    np.testing.assert_allclose(mine[mo, C.POS:C.POS + 3], pos[order], atol=1e-9)
    np.testing.assert_allclose(mine[mo, C.DIST], dist[order], atol=1e-9)
    assert np.count_nonzero(mine[:, C.BODY_B] >= 0) == np.count_nonzero(
        [d.contact[i].geom1 != 0 for i in range(d.ncon)])


def _has(name):
    import importlib.util
    return importlib.util.find_spec(name) is not None


# ---------------------------------------------------------------------------- against coal
def test_polytopes_by_gjk_and_epa_equal_coal(rng):
    """A random polytope against a box, a sphere and a polytope, at random poses: the deepest
    contact's distance (penetrating: EPA; apart within the margin: GJK) and normal equal coal's
    signed distance and normal to 1e-9."""
    coal = pytest.importorskip("coal", reason="coal (screwdyn[collision]) checks GJK and EPA")
    P = rng.normal(size=(40, 3)) * [0.08, 0.06, 0.1]
    V, F = convex_hull(P)
    pts = coal.StdVec_Vec3s()
    for p in V:
        pts.append(p)
    hull = coal.Convex.convexHull(pts, False, "")
    other = {"box": (("box", (0.2, 0.14, 0.1), {}), coal.Box(0.2, 0.14, 0.1)),
             "sphere": (("sphere", (0.1,), {}), coal.Sphere(0.1)),
             "convex": (("convex", (), {"vertices": V, "faces": F}), hull)}
    for name, (shape, theirs) in other.items():
        model = free_bodies(shape, ("convex", (), {"vertices": V, "faces": F, "margin": 0.05}))
        met = 0
        for _ in range(60):
            q = np.concatenate([np.r_[rng.normal(size=3) * 0.1, _unit(rng.normal(size=4))] for _ in range(2)])
            c = detect(model, q, Environment(), self_collision=True)
            T = screwdyn.body_poses(model, q)
            res = coal.DistanceResult()
            req = coal.DistanceRequest()
            req.gjk_tolerance = req.epa_tolerance = 1e-10
            dist = coal.distance(theirs, coal.Transform3s(T[0][:3, :3], T[0][:3, 3]), hull,
                                 coal.Transform3s(T[1][:3, :3], T[1][:3, 3]), req, res)
            if dist > 0.05:
                assert c.count == 0
                continue
            met += 1
            assert c.count == 1 and c.body_a[0] == 1
            np.testing.assert_allclose(c.dist[0], dist, atol=1e-9)
            np.testing.assert_allclose(c.normal[0], res.normal, atol=1e-7)   # from body 0 into body 1
        assert met > 20, name


def _unit(x):
    return x / np.linalg.norm(x)


def test_hull_support_climbs_to_the_brute_force_answer(rng):
    """The support search over a polytope's vertex graph ends where trying every vertex does, for
    random polytopes and directions (a linear function on a convex polytope has no other local
    maximum over the vertex graph)."""
    from screwdyn.algorithms.narrowphase import hull_support
    from screwdyn.collision import hull_graph
    for n in (4, 30, 400):
        V, F = convex_hull(rng.normal(size=(n, 3)) * [1.0, 0.3, 2.0])
        graph = np.concatenate([np.zeros(5, dtype=np.int64), hull_graph(V, F)])
        for u in rng.normal(size=(40, 3)):
            u = tuple(u)
            assert hull_support(V, 0, len(V), graph, 5, u) == hull_support(V, 0, len(V), graph, -1, u)


# ---------------------------------------------------------------------------- robots
def _pinocchio_geometry(name, floating):
    pin = pytest.importorskip("pinocchio")
    from screwdyn.io.urdf import _example_robot_data_dir, example_robot_data_path
    try:
        path = example_robot_data_path(name)
    except FileNotFoundError as e:
        pytest.skip(str(e))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = screwdyn.load_urdf(path, floating_base=floating)
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(str(path))
    root = _example_robot_data_dir()
    gm = pin.buildGeomFromUrdf(pm, str(path), pin.GeometryType.COLLISION,
                               package_dirs=[str(root.parent.parent), str(root.parent.parent.parent)])
    return pin, model, pm, gm


@pytest.mark.parametrize("name", ["solo12", "talos_reduced"])
def test_robots_collision_geometry_where_pinocchio_puts_it(name, rng):
    """Each collision geometry's pose at random configurations equals Pinocchio's GeometryModel
    after updateGeometryPlacements to 1e-12 (Talos: cylinders, a box and meshes on links merged by
    fixed joints; its joints in another order than Pinocchio's, the state mapped by name)."""
    pin, model, pm, gm = _pinocchio_geometry(name, True)
    gd, pd = gm.createData(), pm.createData()
    count = {}
    names = []
    for c in model.collisions:
        k = count[c.link] = count.get(c.link, -1) + 1
        names.append(f"{c.link}_{k}")                # Pinocchio's name of the k-th <collision> of a link
    assert sorted(names) == sorted(g.name for g in gm.geometryObjects)
    for _ in range(3):
        q = screwdyn.random_configuration(model, rng)
        pin.updateGeometryPlacements(pm, pd, gm, gd, screwdyn.to_pinocchio(model, q, pin_model=pm)[0])
        for c, nm in zip(model.collisions, names):
            M = gd.oMg[gm.getGeometryId(nm)]
            T = screwdyn.frame_pose(model, q, c.link) @ c.origin
            np.testing.assert_allclose(T[:3, :3], M.rotation, atol=1e-12)
            np.testing.assert_allclose(T[:3, 3], M.translation, atol=1e-12)


def test_solo12_hulls_hold_its_meshes_and_only_its_feet_touch():
    """Solo12's 17 collision meshes are hulls (its feet included): each holds every vertex of the
    mesh Pinocchio loaded and is made of them; standing with the lowest foot vertex 0.1 mm in the
    ground, the feet and nothing else touch it."""
    pin, model, pm, gm = _pinocchio_geometry("solo12", True)
    assert len(model.collisions) == 17 and all(c.kind == "convex" for c in model.collisions)
    from scipy.spatial import ConvexHull
    for c, g in zip(model.collisions, gm.geometryObjects):
        mesh = np.asarray(g.geometry.vertices())
        V = c.hull()[0]
        planes = ConvexHull(V).equations                 # every mesh vertex inside the hull, the hull's among them
        assert (mesh @ planes[:, :3].T + planes[:, 3]).max() < 1e-12
        assert np.abs(V[:, None, :] - mesh[None]).max(axis=2).min(axis=1).max() == 0.0
    q = screwdyn.neutral(model)
    q[[8, 9, 11, 12, 14, 15, 17, 18]] = [0.8, -1.6, 0.8, -1.6, -0.8, 1.6, -0.8, 1.6]   # the HFE and KFE joints
    q[2] = 0.3
    feet = [k for k, c in enumerate(model.collisions) if c.link.endswith("FOOT")]
    low = min(float((screwdyn.frame_pose(model, q, c.link) @ c.origin)[:3, :3].dot(c.hull()[0].T)[2].min()
                    + (screwdyn.frame_pose(model, q, c.link) @ c.origin)[2, 3]) for c in model.collisions)
    c = detect(model, q, Environment(Ground(height=low + 1e-4)))
    assert sorted(set(c.geom_a[:c.count])) == feet
    assert np.all(c.dist[:c.count] <= 0) and np.all(c.dist[:c.count] >= -1e-4 - 1e-12)


def test_cylinder_pairs_reach_the_depth_of_the_support_functions(rng):
    """A cylinder against a box and a cylinder slightly penetrating (up to 5 mm): EPA's depth is
    the minimum over directions of the support function of the Minkowski difference (found here by
    a dense search and Nelder-Mead), to 1e-7 m, and its normal that minimising direction."""
    from scipy.optimize import minimize

    def h(kind, T, u):
        ul = u @ T[:3, :3]
        s = (np.abs(ul) @ [0.1, 0.07, 0.05] if kind == "box" else
             0.08 * np.linalg.norm(ul[:, :2], axis=1) + 0.1 * np.abs(ul[:, 2]))
        return s + u @ T[:3, 3]

    for other, size in (("box", (0.2, 0.14, 0.1)), ("cylinder", (0.08, 0.2))):
        model = free_bodies(("cylinder", (0.08, 0.2), {}), (other, size, {}))
        met = 0
        while met < 4:
            q = np.r_[pose([0, 0, 0], rot(_unit(rng.normal(size=3)), rng.uniform(0, 3))),
                      pose(_unit(rng.normal(size=3)) * 0.17, rot(_unit(rng.normal(size=3)), rng.uniform(0, 3)))]
            c = detect(model, q, Environment(), self_collision=True)
            if c.count == 0 or c.dist[0] < -5e-3:
                continue
            T = screwdyn.body_poses(model, q)
            u = rng.normal(size=(50000, 3))
            u /= np.linalg.norm(u, axis=1)[:, None]
            f = h(other, T[1], u) + h("cylinder", T[0], -u)       # the overlap if body 1 moves along -u
            i = int(np.argmin(f))
            g = lambda x: (lambda v: h(other, T[1], v[None])[0] + h("cylinder", T[0], -v[None])[0])(x / np.linalg.norm(x))
            r = minimize(g, u[i], method="Nelder-Mead", options=dict(xatol=1e-12, fatol=1e-15, maxiter=4000))
            depth = min(f[i], r.fun)
            np.testing.assert_allclose(c.dist[0], -depth, atol=1e-7)
            np.testing.assert_allclose(-c.normal[0], _unit(r.x), atol=1e-3)
            met += 1


# ---------------------------------------------------------------------------- loading
URDF = """<robot name="arm">
  <link name="base"><collision><geometry><box size="0.3 0.3 0.1"/></geometry></collision></link>
  <link name="upper"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision name="arm"><origin xyz="0 0 0.2" rpy="0 0.3 0"/><geometry><cylinder radius="0.04" length="0.4"/></geometry></collision></link>
  <link name="hand"><collision><origin xyz="0.01 0 0"/><geometry><sphere radius="0.05"/></geometry></collision>
    <collision><geometry><mesh filename="package://nowhere/hand.stl"/></geometry></collision></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><origin xyz="0 0 0.05"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="wrist" type="fixed"><parent link="upper"/><child link="hand"/><origin xyz="0 0 0.4" rpy="0.5 0 0"/></joint>
</robot>"""


def test_urdf_collisions_ride_on_merged_links_and_survive_pickling():
    """<collision> boxes, cylinders, spheres; on a fixed child link the geometry is carried by the
    moving body with its pose composed; a mesh not found is one CollisionWarning; the model and an
    environment pickle with their geometry."""
    with pytest.warns(CollisionWarning, match="nowhere/hand.stl"):
        model = screwdyn.load_urdf(URDF)
    assert [(c.link, c.kind, c.size) for c in model.collisions] == [
        ("base", "box", (0.3, 0.3, 0.1)), ("upper", "cylinder", (0.04, 0.4)), ("hand", "sphere", (0.05,))]
    col = collider(model, Environment(Ground()), self_collision=True)
    assert len(col.pairs) == 2   # upper and hand on one body; it does not meet its parent, the base
    hand = col.geoms[2]
    T = model.frame_pose[model.frame_index("hand")]
    np.testing.assert_allclose(hand[C.G_POSE + 9:C.G_POSE + 12], T[:3, 3] + T[:3, :3] @ [0.01, 0, 0], atol=1e-15)
    assert hand[C.G_ROW] == 0
    again = pickle.loads(pickle.dumps((model, Environment(Ground(0.1), Box((1, 0, 0), (1, 1, 1))))))
    assert [repr(c) for c in again[0].collisions] == [repr(c) for c in model.collisions]
    assert repr(again[1]) == "Environment(Ground(height=0.1, normal=(0, 0, 1)), Box(size=(1, 1, 1) at (1, 0, 0)))"
    q = np.array([0.0])
    one, two = detect(again[0], q, again[1]), detect(model, q, again[1])   # the cylinder in a ground 0.1 up
    assert one.count == two.count == 3
    np.testing.assert_array_equal(one.data[:3], two.data[:3])


def test_mjcf_world_geoms_are_the_environment_and_ellipsoids_are_polytopes():
    xml = """<mujoco><worldbody><geom name="floor" type="plane" size="1 1 1"/>
      <body name="table" pos="1 0 0.4"><geom name="top" type="box" size="0.5 0.5 0.02"/></body>
      <body name="egg" pos="0 0 1"><freejoint/><geom name="egg" type="ellipsoid" size="0.1 0.05 0.05"/>
        <geom name="ghost" type="sphere" size="0.1" contype="0" conaffinity="0"/></body></worldbody></mujoco>"""
    with pytest.warns(CollisionWarning, match="ellipsoid"):
        model = screwdyn.load_mjcf(xml)
    assert [o.name for o in model.environment] == ["floor", "top"]
    np.testing.assert_allclose(model.environment.obstacles[1].origin[:3, 3], [1, 0, 0.4])
    (egg,) = model.collisions
    r = np.linalg.norm(egg.hull()[0] / [0.1, 0.05, 0.05], axis=1)
    np.testing.assert_allclose(r, 1.0, atol=1e-12)
    q = screwdyn.neutral(model)
    q[2] = 0.049
    c = detect(model, q)            # the pole deepest, and the points of the next latitude near it
    assert c.count == 4 and np.all(c.geom_b[:4] == -1) and c.dist[0] == pytest.approx(-0.001, abs=1e-12)


# ---------------------------------------------------------------------------- the layout's promises
def test_batches_equal_single_states_and_the_deepest_are_kept(rng):
    """A batch (2 threads) gives each state's single-state rows bit for bit; with K smaller than the
    contacts found, the K deepest are kept and count says how many were found; unused rows have
    BODY_A = -1 and DIST = inf."""
    model = free_bodies(("box", (0.2, 0.2, 0.2), {}), ("sphere", (0.05,), {}))
    Q = np.stack([np.r_[pose([0, 0, 0.09 + 0.01 * k], rot([1, 1, 0] / np.sqrt(2), 0.05 * k)),
                        pose([0.3, 0, 0.05 - 0.001 * k])] for k in range(6)])
    env = Environment(Ground())
    c = detect(model, Q, env)
    assert c.data.shape == (6, 5, C.WIDTH) and c.count.shape == (6,)
    for k in range(6):
        one = detect(model, Q[k], env)
        np.testing.assert_array_equal(one.data[:one.count], c.data[k, :c.count[k]])
        assert np.all(c.data[k, c.count[k]:, C.BODY_A] == -1) and np.all(np.isinf(c.data[k, c.count[k]:, C.DIST]))
    full = detect(model, Q[0], env)
    two = detect(model, Q[0], env, max_contacts=2)
    assert two.count == full.count == 5
    np.testing.assert_array_equal(np.sort(two.dist), np.sort(full.dist[:5])[:2])


def test_errors_name_what_is_wrong():
    with pytest.raises(InputError, match="normal"):
        Ground(normal=(0, 0, 0))
    with pytest.raises(InputError, match="Sphere: the size"):
        Sphere((0, 0, 0), -1.0)
    with pytest.raises(InputError, match="attached to link"):
        Environment(Collision("x", "sphere", np.eye(4), (1,)))
    model = free_bodies(("sphere", (0.1,), {}))
    with pytest.raises(ModelError, match="not a frame"):
        model.replace(collisions=(Collision("nowhere", "sphere", np.eye(4), (1,)),))
    with pytest.raises(InputError, match="max_contacts"):
        detect(model, pose([0, 0, 1]), Environment(Ground()), max_contacts=0)
    with pytest.raises(InputError, match="q contains NaN"):
        detect(model, np.full(7, np.nan), Environment(Ground()))
    assert repr(Environment(Capsule((0, 0, 1), 0.1, 0.5), Cylinder(np.eye(4), 0.2, 0.1))) == \
        "Environment(Capsule(radius=0.1, length=0.5 at (0, 0, 1)), Cylinder(radius=0.2, length=0.1 at (0, 0, 0)))"


def test_doctests_of_the_modules():
    import doctest

    import screwdyn.collision
    import screwdyn.environment
    for module in (screwdyn.collision, screwdyn.environment):
        failed, attempted = doctest.testmod(module)
        assert failed == 0 and attempted > 0, module.__name__
