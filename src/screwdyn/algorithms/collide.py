"""Collision detection: the contacts of a model's collision geometry with itself and its
environment at a configuration ``q`` (docs/theory.md §16), a fixed number of rows per state.

The public entry is :func:`screwdyn.collision.detect`; it packs the geometry once per model and
environment (:class:`screwdyn.collision.Collider`) into the tables below (``geoms``, ``pairs``,
``vertices``, ``graph``). A compiled caller (a contact solver's step) calls, per state,
``collide_state(narrow, Tw, geoms, pairs, vertices, graph, Gw, pc, scratch, C)`` itself:
``narrow`` the narrow phase of the collider's ``tier`` (:func:`ground_pair` or
:func:`general_pair`), ``Tw`` the bodies' poses from :func:`.kinematics.world_poses`, and work
arrays it allocates once (``internals.stack``): ``Gw (G, 12, 1)``, ``pc (MAX_PAIR, PC_WIDTH)``,
``scratch (SCRATCH, 3)``; :func:`detect` is that loop.

Per state: the world pose of every body (:func:`.kinematics.world_poses`), of every geometry
``T_0g = T_0b T_bg``; then for each candidate pair a broad-phase test of bounding spheres (for a
plane, the signed distance of the other's centre minus its bounding radius) against the pair's
margin plus gap, and the narrow phase of the pair's kinds (:mod:`.narrowphase`, :mod:`.boxbox`,
:mod:`.gjk`). Each contact found is written into the next row of the output ``C (K, WIDTH)``; when
more than ``K`` are found, a new contact replaces the shallowest row if it is deeper, so the ``K``
deepest are kept (``count`` says how many were found).

Contact rows (``C[k, :]`` for ``k < min(count, K)``; the rows after them have ``BODY_A = -1`` and
``DIST = inf``, the rest undefined). Side A is a moving body of the model; side B is the world
(an obstacle of the environment, or geometry fixed to the model's fixed base) or, for a self
contact, another body. Indices are stored as float64 (exact)::

    =======  ===========  =====================================================================
    columns  name         meaning
    =======  ===========  =====================================================================
    0        BODY_A       body of side A (``model.link_names`` index; the kernels' row is
                          ``model.idx_vs[b] + model.nvs[b] - 1``)
    1        BODY_B       body of side B, or -1: the world (environment, fixed base)
    2        GEOM_A       index of A's geometry in ``model.collisions``
    3        GEOM_B       index of B's in ``model.collisions``, or ``-1 - k`` for obstacle ``k`` of
                          the environment (``environment.obstacles[k]``)
    4:7      POS          contact point in the world frame, midway between the two surfaces [m]
    7:10     NORMAL       unit contact normal in the world frame, pointing from B into A (a force
                          ``lambda_n NORMAL``, ``lambda_n >= 0``, on A pushes A away from B)
    10:13    TANGENT1     first tangent: MuJoCo's choice (``mju_makeFrame``), a function of the
                          normal only: world y (z when ``|n_y| >= 0.5``) made orthogonal to it
    13:16    TANGENT2     ``NORMAL x TANGENT1``; rows 7:16 are the contact frame (orthonormal,
                          right-handed, deterministic: the same normal gives the same frame)
    16       DIST         signed distance of the surfaces along NORMAL [m]: > 0 apart, < 0
                          penetrating (the depth is ``-DIST``); the point of A's surface is
                          ``POS + DIST / 2 NORMAL``, of B's ``POS - DIST / 2 NORMAL``
    17       MU           sliding friction coefficient (Coulomb)
    18       TORSION      torsional friction coefficient [m]
    19       ROLLING      rolling friction coefficient [m]
    20       RESTITUTION  coefficient of restitution in [0, 1]
    21:23    SOLREF       MuJoCo's solref (time constant [s], damping ratio) or (-stiffness, -damping)
    23:28    SOLIMP       MuJoCo's solimp (dmin, dmax, width [m], midpoint, power)
    28       MARGIN       the contact is active when DIST < MARGIN (MuJoCo's includemargin); rows
                          up to MARGIN + gap are reported
    29       CONDIM       1 (normal only), 3 (and sliding friction), 4 (and torsion), 6 (and rolling)
    30       PAIR         the candidate pair (row of the pair table) that made the contact
    31       SLOT         its index among that pair's contacts (PAIR, SLOT: a warm start's key)
    =======  ===========  =====================================================================

The parameters of columns 17:30 are those of the pair (MuJoCo's rules, :mod:`screwdyn.collision`).

Input tables, made by :class:`screwdyn.collision.Collider`:

``geoms (G, GEOM_WIDTH)``, a row per geometry (the model's collisions, then the environment's)::

    0        G_ROW        the kernels' row of its body (-1: fixed in the world)
    1        G_KIND       PLANE 0, SPHERE 1, CAPSULE 2, CYLINDER 3, BOX 4, CONVEX 5
    2:14     G_POSE       its pose in the body's frame (in the world for a fixed one): R row-major, p
    14:17    G_SIZE       half sizes (:attr:`screwdyn.geometry.Collision.half_sizes`)
    17       G_RBOUND     bounding radius about its origin (0 for a plane)
    18       G_VADR       first row of its vertices in ``vertices`` (a polytope), else 0
    19       G_VNUM       number of its vertices (0 for the others)
    20       G_GADR       where its vertex graph starts in ``graph`` (-1: none)

``pairs (P, PAIR_WIDTH)``, a row per candidate pair::

    0, 1     P_A, P_B     rows of sides A and B in ``geoms``
    2:6      P_BODY_A, P_BODY_B, P_GEOM_A, P_GEOM_B   the contact rows' columns 0:4
    17:30    the contact parameters, at the contact rows' columns (MU .. CONDIM)
    31       P_DETECT     contacts are reported up to this distance (margin + gap)

``vertices (V, 3)``: the polytopes' vertices, each in its own frame; ``graph`` (int64): each
polytope's vertex graph (:func:`screwdyn.collision.hull_graph`: its six axis-extreme vertices, the
CSR offsets and neighbours of its vertices), which the support search climbs.
"""
import math

import numpy as np
from numba import prange

from .boxbox import BOX_WORK, box_box
from .gjk import GJK_WORK, convex_pair
from .entry import F64, I64, Entry, array
from .internals import release_gil, restore_gil, stack, window
from .kinematics import world_poses
from .narrowphase import (
    BOX, CAPSULE, CONVEX, CYLINDER, MAX_PAIR, PC_WIDTH, PLANE, ROW0, SPHERE, capsule_box, capsule_capsule, normalize,
    plane_box, plane_capsule, plane_convex, plane_cylinder, plane_sphere, sphere_box, sphere_capsule,
    sphere_cylinder, sphere_sphere,
)
from .spatial_kernels import compose
from .status import Status
from .target import BATCH, HELPER, INLINE, KERNEL, ONE, njit
from .work import check, claim, get12, is_rows, is_vector, one_state, put, q_size, row, units

# contact rows
BODY_A, BODY_B, GEOM_A, GEOM_B, POS, NORMAL, TANGENT1, TANGENT2, DIST = 0, 1, 2, 3, 4, 7, 10, 13, 16
MU, TORSION, ROLLING, RESTITUTION, SOLREF, SOLIMP, MARGIN, CONDIM, PAIR, SLOT = \
    17, 18, 19, 20, 21, 23, 28, 29, 30, 31
WIDTH = 32

# geometry rows
G_ROW, G_KIND, G_POSE, G_SIZE, G_RBOUND, G_VADR, G_VNUM, G_GADR = 0, 1, 2, 14, 17, 18, 19, 20
GEOM_WIDTH = 21

# pair rows (the parameters, 17:30, at the contact rows' columns)
P_A, P_B, P_BODY_A, P_BODY_B, P_GEOM_A, P_GEOM_B, P_DETECT = 0, 1, 2, 3, 4, 5, 31
PAIR_WIDTH = 32

SCRATCH = max(BOX_WORK, GJK_WORK)   # rows of the narrow phase's scratch array (x, y, z)
MAX_GEOMS = 1024      # the most geometries (model and environment) one call takes (its work is on the stack)
GIL_FROM = 64         # one-state calls release the GIL from this many candidate pairs


@njit(**HELPER)
def per_lane(n):
    """Floats of stack work of one state: body poses, geometry poses (at most MAX_GEOMS), pre-contacts
    and the box-box scratch."""
    return 12 * (n + 1) + 12 * MAX_GEOMS + MAX_PAIR * PC_WIDTH + 3 * SCRATCH


@njit(**HELPER)
def contact_frame(n):
    """The tangents of MuJoCo's ``mju_makeFrame`` for the unit normal ``n`` (no hint): world y, or z
    when ``|n_y| >= 0.5``, made orthogonal to ``n`` and normalised; the second is ``n x t1``."""
    y = (0.0, 1.0, 0.0) if -0.5 < n[1] < 0.5 else (0.0, 0.0, 1.0)
    d = n[0] * y[0] + n[1] * y[1] + n[2] * y[2]
    t1, _ = normalize((y[0] - d * n[0], y[1] - d * n[1], y[2] - d * n[2]))
    t2 = (n[1] * t1[2] - n[2] * t1[1], n[2] * t1[0] - n[0] * t1[2], n[0] * t1[1] - n[1] * t1[0])
    return t1, t2


@njit(**INLINE)
def ground_pair(G1, s1, sh1, G2, s2, sh2, vertices, graph, margin, pc, scratch):
    """The narrow phase of a plane (shape 1) against a shape of another kind, into ``pc``: the
    number of contacts, normals from 1 into 2. ``sh = (kind, first vertex, vertices, graph start)``."""
    k1, k2 = sh1[0], sh2[0]
    if k1 != PLANE:
        return 0
    if k2 == SPHERE:
        return plane_sphere(G1, G2, s2, margin, pc, ROW0)
    if k2 == CAPSULE:
        return plane_capsule(G1, G2, s2, margin, pc, ROW0)
    if k2 == CYLINDER:
        return plane_cylinder(G1, G2, s2, margin, pc, ROW0)
    if k2 == BOX:
        return plane_box(G1, G2, s2, margin, pc, ROW0)
    if k2 == CONVEX:
        return plane_convex(G1, G2, vertices, sh2[1], sh2[2], graph, sh2[3], margin, pc, ROW0, scratch)
    return 0


@njit(**INLINE)
def general_pair(G1, s1, sh1, G2, s2, sh2, vertices, graph, margin, pc, scratch):
    """The narrow phase of any shapes of kinds ``k1 <= k2``, into ``pc``: the number of contacts,
    normals from 1 into 2. In closed form: planes against everything, spheres against spheres,
    capsules, cylinders and boxes, capsules against capsules and boxes, boxes against boxes (their
    manifold, up to four contacts); every other pair (a cylinder or a polytope against a sphere-less
    shape) by GJK and EPA, one contact."""
    k1, k2 = sh1[0], sh2[0]
    if k1 == PLANE:
        return ground_pair(G1, s1, sh1, G2, s2, sh2, vertices, graph, margin, pc, scratch)
    if k1 == SPHERE:
        if k2 == SPHERE:
            return sphere_sphere(G1, s1, G2, s2, margin, pc, ROW0)
        if k2 == CAPSULE:
            return sphere_capsule(G1, s1, G2, s2, margin, pc, ROW0)
        if k2 == CYLINDER:
            return sphere_cylinder(G1, s1, G2, s2, margin, pc, ROW0)
        if k2 == BOX:
            return sphere_box(G1, s1, G2, s2, margin, pc, ROW0)
    if k1 == CAPSULE:
        if k2 == CAPSULE:
            return capsule_capsule(G1, s1, G2, s2, margin, pc, ROW0)
        if k2 == BOX:
            return capsule_box(G1, s1, G2, s2, margin, pc, ROW0)
    if k1 == BOX and k2 == BOX:
        return box_box(G1, s1, G2, s2, margin, pc, ROW0, scratch)
    return convex_pair(G1, s1, sh1, G2, s2, sh2, vertices, graph, margin, pc, ROW0, scratch)


@njit(**HELPER)
def size3(geoms, g):
    return geoms[g, G_SIZE], geoms[g, G_SIZE + 1], geoms[g, G_SIZE + 2]


@njit(**HELPER)
def shape_of(geoms, g):
    """``(kind, first vertex, vertices, graph start)`` of geometry ``g``."""
    return int(geoms[g, G_KIND]), int(geoms[g, G_VADR]), int(geoms[g, G_VNUM]), int(geoms[g, G_GADR])


@njit(**HELPER)
def place(C, found, K, d):
    """The row of ``C`` a new contact of distance ``d`` goes to: the next one while there is room,
    then the shallowest row if it is shallower than ``d`` (else -1: the contact is dropped)."""
    if found < K:
        return found
    worst, r = d, -1
    for j in range(K):
        if C[j, DIST] > worst:
            worst, r = C[j, DIST], j
    return r


@njit(**INLINE)
def collide_state(narrow, Tw, geoms, pairs, vertices, graph, Gw, pc, scratch, C):
    """The contacts of one state into ``C (K, WIDTH)`` (the module docstring's layout); returns how
    many were found (more than ``K`` when rows were dropped). ``narrow``: :func:`any_pair`, or
    :func:`ground_pair` when every pair has a plane (a kernel a quarter the size). ``Tw (n + 1, 12,
    1)``: the bodies' world poses (:func:`.kinematics.world_poses`, row ``n`` the base's identity);
    ``Gw (G, 12, 1)``, ``pc (MAX_PAIR, PC_WIDTH)``, ``scratch (SCRATCH, 3)``: work."""
    K = C.shape[0]
    nrows = Tw.shape[0] - 1
    for g in range(geoms.shape[0]):
        Tg = (geoms[g, G_POSE], geoms[g, G_POSE + 1], geoms[g, G_POSE + 2], geoms[g, G_POSE + 3],
              geoms[g, G_POSE + 4], geoms[g, G_POSE + 5], geoms[g, G_POSE + 6], geoms[g, G_POSE + 7],
              geoms[g, G_POSE + 8], geoms[g, G_POSE + 9], geoms[g, G_POSE + 10], geoms[g, G_POSE + 11])
        r = int(geoms[g, G_ROW])
        put(Gw[g], 0, compose(get12(Tw[r if r >= 0 else nrows], 0), Tg) if r >= 0 else Tg)
    found = 0
    for p in range(pairs.shape[0]):
        ga, gb = int(pairs[p, P_A]), int(pairs[p, P_B])
        detect = pairs[p, P_DETECT]
        ka, kb = int(geoms[ga, G_KIND]), int(geoms[gb, G_KIND])
        # broad phase: bounding spheres, or a bounding sphere against a plane
        if ka == PLANE or kb == PLANE:
            gp, go = (ga, gb) if ka == PLANE else (gb, ga)
            sep = ((Gw[go, 9, 0] - Gw[gp, 9, 0]) * Gw[gp, 2, 0] + (Gw[go, 10, 0] - Gw[gp, 10, 0]) * Gw[gp, 5, 0]
                   + (Gw[go, 11, 0] - Gw[gp, 11, 0]) * Gw[gp, 8, 0]) - geoms[go, G_RBOUND]
        else:
            dx = Gw[ga, 9, 0] - Gw[gb, 9, 0]
            dy = Gw[ga, 10, 0] - Gw[gb, 10, 0]
            dz = Gw[ga, 11, 0] - Gw[gb, 11, 0]
            sep = math.sqrt(dx * dx + dy * dy + dz * dz) - geoms[ga, G_RBOUND] - geoms[gb, G_RBOUND]
        if sep > detect:
            continue
        flip = ka <= kb              # A is shape 1 of the narrow phase, whose normal points from 1 into 2
        g1, g2 = (ga, gb) if flip else (gb, ga)
        m = narrow(get12(Gw[g1], 0), size3(geoms, g1), shape_of(geoms, g1), get12(Gw[g2], 0), size3(geoms, g2),
                   shape_of(geoms, g2), vertices, graph, detect, pc, scratch)
        s = -1.0 if flip else 1.0
        for j in range(m):
            r = place(C, found, K, pc[j, 6])
            found += 1
            if r < 0:
                continue
            n = (s * pc[j, 3], s * pc[j, 4], s * pc[j, 5])
            t1, t2 = contact_frame(n)
            C[r, BODY_A] = pairs[p, P_BODY_A]
            C[r, BODY_B] = pairs[p, P_BODY_B]
            C[r, GEOM_A] = pairs[p, P_GEOM_A]
            C[r, GEOM_B] = pairs[p, P_GEOM_B]
            C[r, POS], C[r, POS + 1], C[r, POS + 2] = pc[j, 0], pc[j, 1], pc[j, 2]
            C[r, NORMAL], C[r, NORMAL + 1], C[r, NORMAL + 2] = n
            C[r, TANGENT1], C[r, TANGENT1 + 1], C[r, TANGENT1 + 2] = t1
            C[r, TANGENT2], C[r, TANGENT2 + 1], C[r, TANGENT2 + 2] = t2
            C[r, DIST] = pc[j, 6]
            for c in range(MU, CONDIM + 1):
                C[r, c] = pairs[p, c]
            C[r, PAIR] = p
            C[r, SLOT] = j
    for r in range(found, K):
        C[r, BODY_A] = -1.0
        C[r, DIST] = math.inf
    return found


@njit(**INLINE)
def detect(narrow, kd, q, geoms, pairs, vertices, graph, C, count, status, k0, k1):
    """States ``k0 <= k < k1`` of ``q (B, nq)``: contacts into ``C (B, K, WIDTH)``, the number found
    into ``count (B, 1)``, by the narrow phase ``narrow`` (:func:`collide_state`)."""
    n = kd.shape[0] - 1
    G = geoms.shape[0]
    Tw = stack((n + 1, 12, 1))
    Gw = stack((max(G, 1), 12, 1))
    pc = stack((MAX_PAIR, PC_WIDTH))
    scratch = stack((SCRATCH, 3))
    K = C.shape[1]
    for k in range(k0, k1):
        status[k] = Status.OK
        check(status, k, Status.NONFINITE, q[k])
        if status[k]:
            continue
        world_poses(kd, q[k], Tw)
        Ck = window(C, k * K * C.shape[2], (K, C.shape[2]))
        found = collide_state(narrow, Tw, geoms, pairs, vertices, graph, Gw, pc, scratch, Ck)
        count[k, 0] = found
        bad = 0
        for r in range(min(found, K)):
            for c in range(POS, DIST + 1):
                bad += (Ck[r, c] - Ck[r, c]) != 0.0
        if bad:
            status[k] = Status.OVERFLOW


@njit(**KERNEL)
def ground_range(kd, q, geoms, pairs, vertices, graph, C, count, status, k0, k1):
    """:func:`detect` of planes only, a function of its own (its work on its own stack frame)."""
    detect(ground_pair, kd, q, geoms, pairs, vertices, graph, C, count, status, k0, k1)


@njit(**KERNEL)
def general_range(kd, q, geoms, pairs, vertices, graph, C, count, status, k0, k1):
    """:func:`detect` of any pairs."""
    detect(general_pair, kd, q, geoms, pairs, vertices, graph, C, count, status, k0, k1)


@njit(**HELPER)
def fits(kd, geoms, pairs, C):
    return (C.shape[C.ndim - 1] == WIDTH and geoms.shape[0] <= MAX_GEOMS and geoms.shape[1] == GEOM_WIDTH
            and pairs.shape[1] == PAIR_WIDTH)


@njit(**INLINE)
def detect_state(narrow, kd, q, geoms, pairs, vertices, graph, C, count):
    """One state: :func:`detect` on it as a batch of one."""
    if not (is_vector(q, q_size(kd)) and count.shape[0] == 1 and fits(kd, geoms, pairs, C)):
        return Status.NOT_FAST
    status = stack((1,)).view(np.int64)
    k0, k1 = one_state(status)
    gil = release_gil(pairs.shape[0] >= GIL_FROM)
    detect(narrow, kd, row(q), geoms, pairs, vertices, graph, window(C, 0, (1, C.shape[0], WIDTH)),
           window(count, 0, (1, 1)), status, k0, k1)
    restore_gil(gil)
    return status[0]


@njit(**ONE)
def ground_one(kd, q, geoms, pairs, vertices, graph, C, count):
    """One state, every pair with a plane."""
    return detect_state(ground_pair, kd, q, geoms, pairs, vertices, graph, C, count)


@njit(**BATCH)
def ground_batch(kd, q, geoms, pairs, vertices, graph, C, count, status):
    """States ``q (B, nq)`` over numba's threads, every pair with a plane."""
    B = q.shape[0]
    if not (is_rows(q, B, q_size(kd)) and fits(kd, geoms, pairs, C)):
        return Status.NOT_FAST
    nunits, size, counter = units(B, 1)
    for u in prange(nunits):
        start, end = claim(counter, u, B, size)
        while start < end:
            ground_range(kd, q, geoms, pairs, vertices, graph, C, count, status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


@njit(**ONE)
def general_one(kd, q, geoms, pairs, vertices, graph, C, count):
    """One state, any pairs."""
    return detect_state(general_pair, kd, q, geoms, pairs, vertices, graph, C, count)


@njit(**BATCH)
def general_batch(kd, q, geoms, pairs, vertices, graph, C, count, status):
    """States ``q (B, nq)`` over numba's threads, any pairs."""
    B = q.shape[0]
    if not (is_rows(q, B, q_size(kd)) and fits(kd, geoms, pairs, C)):
        return Status.NOT_FAST
    nunits, size, counter = units(B, 1)
    for u in prange(nunits):
        start, end = claim(counter, u, B, size)
        while start < end:
            general_range(kd, q, geoms, pairs, vertices, graph, C, count, status, start, end)
            start, end = claim(counter, u, B, size)
    return 0


# Three kernels, each compiled on first use: the narrow phase of all pairs in one kernel took
# longer than the 15 s a kernel may take to compile cold. A scene of planes only (legged robots on
# the ground) needs the smallest; screwdyn.collision picks the smallest that covers a scene's pairs.
_PARAMS = (array(2), array(2), array(2), array(1, dtype=I64))
ENTRIES = {
    "ground": Entry("contacts with planes", ground_one, ground_batch, ("q",), (2, 1), per_lane, params=_PARAMS),
    "general": Entry("contacts", general_one, general_batch, ("q",), (2, 1), per_lane, params=_PARAMS),
}
