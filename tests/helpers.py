"""Shared test utilities: independent oracles (Pinocchio) and random models."""
from __future__ import annotations

import functools

import numpy as np

import screwdyn
from screwdyn.algorithms.target import njit as _njit
from screwdyn.inertia import RigidBody
from screwdyn.spatial import exp_so3, transform

# A compiled function of a test's that calls the kernels' helpers: on screwdyn's numba target (a
# function of numba's own target cannot call them), compiled to machine code, not cached.
kernel_jit = functools.partial(_njit, entry=True, cache=False)


def random_rotation(rng):
    return exp_so3(rng.normal(size=3))


def random_body(rng, mass_scale=1.0):
    """A random physical rigid body (principal moments satisfy the triangle inequality)."""
    m = mass_scale * rng.uniform(0.2, 3.0)
    # principal moments from a random box: always physical
    sides = rng.uniform(0.05, 0.6, size=3)
    I = m / 12 * np.diag([sides[1]**2 + sides[2]**2, sides[0]**2 + sides[2]**2, sides[0]**2 + sides[1]**2])
    R = random_rotation(rng)
    return RigidBody(m, rng.uniform(-0.3, 0.3, size=3), R @ I @ R.T)


def random_model(rng, n=7, fixed=2, prismatic=0.3, branching=0.5, gravity=(0, 0, -9.81), armature=False, aligned=False,
                 spherical=0.0, floating=False):
    """A random tree: ``n`` moving joints (revolute or prismatic, arbitrary axes; a fraction
    ``spherical`` of them spherical), ``fixed`` fixed joints merged into their parents, and
    branching (parents drawn among earlier links). With ``aligned``, joint axes are coordinate
    axes, either sign (as most URDF joints); with ``floating``, the tree hangs from a free-flyer."""
    b = screwdyn.ModelBuilder("random_tree", gravity=gravity)
    links = ["base"]
    if floating:
        b.add_body("trunk", "base", "root_joint", "free_flyer", origin=transform(random_rotation(rng), rng.uniform(-1, 1, 3)),
                   inertial=random_body(rng, 5.0), rotor_inertia=rng.uniform(0, 1e-3) if armature else 0.0)
        links = ["trunk"]
    kinds = ["moving"] * n + ["fixed"] * fixed
    rng.shuffle(kinds)
    for k, kind in enumerate(kinds):
        parent = links[-1] if rng.random() > branching else links[rng.integers(len(links))]
        origin = transform(random_rotation(rng), rng.uniform(-0.5, 0.5, size=3))
        name = f"l{k}"
        if kind == "fixed":
            b.add_body(name, parent, f"j{k}", "fixed", origin=origin, inertial=random_body(rng))
        else:
            jt = "prismatic" if rng.random() < prismatic else "revolute"
            if rng.random() < spherical:
                jt = "spherical"
            axis = np.eye(3)[rng.integers(3)] * rng.choice([-1, 1]) if aligned else rng.normal(size=3)
            b.add_body(name, parent, f"j{k}", jt, axis=axis, origin=origin, inertial=random_body(rng),
                       rotor_inertia=rng.uniform(0, 1e-3) if armature else 0.0,
                       gear_ratio=rng.uniform(1, 100) if armature else 1.0,
                       damping=rng.uniform(0, 1), friction=rng.uniform(0, 1))
        links.append(name)
    return b.build()


def to_pinocchio(model):
    """The same tree as a Pinocchio model (joint order preserved: pin joint i+1 = our body i)."""
    import pinocchio as pin

    pm = pin.Model()
    pm.gravity = pin.Motion(np.concatenate([model.gravity, np.zeros(3)]))
    for i in range(model.nbodies):
        T = model.T_parent_body[i]
        placement = pin.SE3(T[:3, :3].copy(), T[:3, 3].copy())
        axis = model.joint_axis[i].copy()
        jm = {0: lambda: pin.JointModelRevoluteUnaligned(axis), 1: lambda: pin.JointModelPrismaticUnaligned(axis),
              2: pin.JointModelFreeFlyer, 3: pin.JointModelSpherical}[int(model.joint_type[i])]()
        jid = pm.addJoint(int(model.parent[i]) + 1, jm, placement, model.joint_names[i])
        pm.appendBodyToJoint(jid, pin.Inertia(float(model.mass[i]), model.com[i].copy(), model.inertia_com[i].copy()),
                             pin.SE3.Identity())
    pm.armature = model.armature.copy()
    return pm


def pinocchio_velocity_order(model):
    """``P`` with screwdyn's ``v = v_pin[P]`` for the model :func:`to_pinocchio` makes (the same
    joint order; a free-flyer's block is linear first in Pinocchio)."""
    P = np.arange(model.nv)
    for j in np.flatnonzero(model.joint_type == screwdyn.FREE_FLYER):
        k = model.idx_vs[j]
        P[k:k + 6] = k + np.array([3, 4, 5, 0, 1, 2])
    return P


def random_state(rng, n, batch=()):
    shape = tuple(batch) + (n,)
    return rng.uniform(-np.pi, np.pi, shape), rng.normal(size=shape) * 2, rng.normal(size=shape) * 3


def urdf_robot(name, armature=False):
    """``(model, pinocchio model, idx)`` for an example-robot-data URDF loaded by both libraries;
    ``idx[i]`` is Pinocchio's velocity index of our joint ``i`` (sibling orders differ). With
    ``armature``, both get the same reflected rotor inertia (through a gear ratio of 2)."""
    import warnings

    import pinocchio as pin

    from screwdyn.io.urdf import example_robot_data_path

    path = example_robot_data_path(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # mimic joints loaded as independent
        model = screwdyn.load_urdf(path)
    pm = pin.buildModelFromUrdf(str(path))
    assert pm.nq == pm.nv == model.n
    idx = np.array([pm.joints[pm.getJointId(j)].idx_v for j in model.joint_names])
    if armature:
        model = model.replace(rotor_inertia=np.linspace(0.01, 0.2, model.n) / 4.0, gear_ratio=np.full(model.n, 2.0))
        a = np.zeros(model.n)
        a[idx] = model.armature
        pm.armature = a
    return model, pm, idx


def to_pin(x, idx):
    """A vector in screwdyn's joint order put into Pinocchio's."""
    y = np.empty_like(x)
    y[..., idx] = x
    return y


def random_chain(rng, n):
    """Modern Robotics lists ``(Mlist, Glist, Slist)`` of a random n-joint chain (30 % prismatic)."""
    Ms = [transform(exp_so3(rng.normal(size=3)), rng.normal(size=3)) for _ in range(n + 1)]
    bodies = [random_body(rng) for _ in range(n)]
    Gs = [screwdyn.inertia.spatial_inertia(b.mass, np.zeros(3), b.inertia) for b in bodies]
    cols = []
    for _ in range(n):
        w = rng.normal(size=3)
        w /= np.linalg.norm(w)
        if rng.random() < 0.3:
            cols.append(np.concatenate([np.zeros(3), w]))                      # prismatic
        else:
            cols.append(np.concatenate([w, -np.cross(w, rng.normal(size=3))]))  # revolute
    return Ms, Gs, np.array(cols).T


@functools.cache
def erd_pair(name):
    """``(model, pinocchio model, idx, q_to_pin)`` for an example-robot-data URDF that both libraries
    load with a fixed base, or None when one of them does not load it (made once per test process).
    ``idx[i]`` is Pinocchio's velocity index of our joint ``i``; ``q_to_pin(q)`` is Pinocchio's
    configuration of our ``q`` (a continuous joint is ``(cos q, sin q)`` there)."""
    import warnings

    import pinocchio as pin

    from screwdyn.errors import ScrewdynError
    from screwdyn.io.urdf import example_robot_data_path

    try:
        path = example_robot_data_path(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)   # mimic joints loaded as independent
            model = screwdyn.load_urdf(path)
        pm = pin.buildModelFromUrdf(str(path))
    except (FileNotFoundError, ScrewdynError, ValueError, RuntimeError):
        return None
    if pm.nv != model.n:
        return None
    joints = [pm.joints[pm.getJointId(j)] for j in model.joint_names]
    idx = np.array([j.idx_v for j in joints])
    iq = np.array([j.idx_q for j in joints])
    unbounded = np.array([j.nq == 2 for j in joints])

    def q_to_pin(q):
        out = np.empty(pm.nq)
        out[iq[~unbounded]] = q[~unbounded]
        out[iq[unbounded]] = np.cos(q[unbounded])
        out[iq[unbounded] + 1] = np.sin(q[unbounded])
        return out

    return model, pm, idx, q_to_pin


def rel(ours, theirs):
    """``max |ours - theirs| / max |theirs|``: the relative difference of two arrays."""
    return np.abs(np.asarray(ours) - theirs).max() / max(np.abs(theirs).max(), 1e-300)


def central(f, x, eps=1e-6):
    """``df/dx`` by central differences, column by column (the last axis of the result)."""
    cols = []
    for j in range(x.shape[-1]):
        e = np.zeros_like(x)
        e[..., j] = eps
        cols.append((f(x + e) - f(x - e)) / (2 * eps))
    return np.stack(cols, axis=-1)
