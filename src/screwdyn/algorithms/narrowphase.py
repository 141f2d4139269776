"""Narrow phase: the contacts between two convex shapes at given poses (docs/theory.md §16).

Each function takes the shapes' poses in the world as twelve numbers ``G = (R row-major, p)``
(:mod:`.spatial_kernels`), their half sizes ``s`` (:attr:`screwdyn.geometry.Collision.half_sizes`:
sphere ``(r, 0, 0)``, capsule and cylinder ``(r, h, 0)`` with ``h`` half the length along the local
z axis, box half edge lengths) and a ``margin``, writes each contact it finds into the next rows of
``pc (rows, 7)`` from row ``k`` on, and returns how many it wrote. A pre-contact row is ::

    pc[j, 0:3]   the contact point in the world, midway between the two surfaces
    pc[j, 3:6]   the unit normal, pointing from shape 1 into shape 2
    pc[j, 6]     the signed distance between the surfaces along the normal (< 0: penetration)

and a contact is reported when its distance is at most ``margin``. Shape 1 is of the lower kind
(:data:`PLANE` < :data:`SPHERE` < :data:`CAPSULE` < :data:`CYLINDER` < :data:`BOX` < :data:`CONVEX`),
as in MuJoCo, whose conventions (``mjContact.pos``, ``frame[0:3]``, ``dist``) these are. The
primitive pairs follow MuJoCo's ``engine_collision_primitive.c`` and ``engine_collision_box.c``
step by step, so that their contacts equal MuJoCo's to rounding:

* a plane (the half-space ``z <= 0`` of its frame) against a sphere (one contact), a capsule (its
  two end spheres), a cylinder (up to four points of its rims), a box (up to four corners);
* sphere-sphere, sphere-capsule (the nearest point of the segment), sphere-cylinder (side, cap or
  rim), sphere-box (the nearest point of the box, or the nearest face from inside);
* capsule-capsule (the nearest points of the segments; two contacts for parallel segments);
* box-box: separating axes over the 15 candidates, then either the edge-edge witness pair (one
  contact) or the incident face clipped against the reference face (Sutherland-Hodgman), as
  MuJoCo's ``mjc_BoxBox`` does; screwdyn keeps at most four of the clipped points (the deepest, the
  one farthest from it, and the two farthest on either side of their line: the largest
  quadrilateral of the patch that these greedy steps find).

screwdyn's own, where MuJoCo's is a heuristic or a general method:

* capsule-box: the point of the segment nearest the box (the exact minimum of the convex distance
  along the segment, over the breakpoints and stationary points of its pieces) as a sphere-box
  contact, and each end of the segment as one when it touches with a normal within 45 degrees of
  the first (a capsule lying on a face: both ends);
* plane-convex polytope: the deepest vertex, then among the vertices within the margin the one
  farthest from it in the plane and the farthest on either side of their line (at most four).

The pairs of :mod:`.gjk` (a polytope or a cylinder against a sphere, capsule, cylinder, box or
polytope) give one contact from GJK and EPA.
"""
import math

import numpy as np

from .target import HELPER, INLINE, KERNEL, njit


PLANE = 0
SPHERE = 1
CAPSULE = 2
CYLINDER = 3
BOX = 4
CONVEX = 5

MINVAL = 1e-15        # MuJoCo's mjMINVAL
ROW0 = np.int64(0)    # the first row of pre-contacts (an int64, not a literal: one compiled signature)
PC_WIDTH = 7          # columns of a pre-contact row
MAX_PAIR = 8          # the most contacts any pair function writes (box-box before its reduction)


# ---------------------------------------------------------------------------------- 3-vectors
@njit(**HELPER)
def add(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2]


@njit(**HELPER)
def sub(a, b):
    return a[0] - b[0], a[1] - b[1], a[2] - b[2]


@njit(**HELPER)
def scale(a, s):
    return a[0] * s, a[1] * s, a[2] * s


@njit(**HELPER)
def add_scaled(a, b, s):
    """``a + s b``."""
    return a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2]


@njit(**HELPER)
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(**HELPER)
def cross3(a, b):
    return a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]


@njit(**HELPER)
def normalize(a):
    """``(a / |a|, |a|)``; ``(1, 0, 0)`` for a vector shorter than MINVAL (MuJoCo's ``mju_normalize3``)."""
    n = math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
    if n < MINVAL:
        return (1.0, 0.0, 0.0), n
    inv = 1.0 / n
    return (a[0] * inv, a[1] * inv, a[2] * inv), n


@njit(**HELPER)
def position(G):
    return G[9], G[10], G[11]


@njit(**HELPER)
def zaxis(G):
    """The z axis of the frame ``G`` (the last column of its rotation)."""
    return G[2], G[5], G[8]


@njit(**HELPER)
def xaxis(G):
    return G[0], G[3], G[6]


@njit(**HELPER)
def rotate(G, v):
    """``R v``."""
    return (G[0] * v[0] + G[1] * v[1] + G[2] * v[2], G[3] * v[0] + G[4] * v[1] + G[5] * v[2],
            G[6] * v[0] + G[7] * v[1] + G[8] * v[2])


@njit(**HELPER)
def rotate_back(G, v):
    """``R^T v``."""
    return (G[0] * v[0] + G[3] * v[1] + G[6] * v[2], G[1] * v[0] + G[4] * v[1] + G[7] * v[2],
            G[2] * v[0] + G[5] * v[1] + G[8] * v[2])


@njit(**HELPER)
def clip(x, lo, hi):
    return lo if x < lo else hi if x > hi else x


@njit(**HELPER)
def emit(pc, k, p, n, d):
    """Write a pre-contact (point ``p``, normal ``n``, distance ``d``) into row ``k`` of ``pc``."""
    pc[k, 0], pc[k, 1], pc[k, 2] = p
    pc[k, 3], pc[k, 4], pc[k, 5] = n
    pc[k, 6] = d


# ---------------------------------------------------------------------------------- plane
@njit(**HELPER)
def plane_point(pc, k, n, p0, c, r, margin):
    """A sphere of radius ``r`` at ``c`` against the plane of normal ``n`` through ``p0``: 0 or 1
    contact (MuJoCo's ``mjraw_PlaneSphere``)."""
    cdist = dot(sub(c, p0), n)
    if cdist > margin + r:
        return 0
    d = cdist - r
    emit(pc, k, add_scaled(c, n, -d / 2 - r), n, d)
    return 1


@njit(**KERNEL)
def plane_sphere(G1, G2, s2, margin, pc, k):
    return plane_point(pc, k, zaxis(G1), position(G1), position(G2), s2[0], margin)


@njit(**KERNEL)
def plane_capsule(G1, G2, s2, margin, pc, k):
    """The two end spheres of the capsule (MuJoCo's ``mjc_PlaneCapsule``)."""
    n, p0, c, a = zaxis(G1), position(G1), position(G2), zaxis(G2)
    m = plane_point(pc, k, n, p0, add_scaled(c, a, s2[1]), s2[0], margin)
    return m + plane_point(pc, k + m, n, p0, add_scaled(c, a, -s2[1]), s2[0], margin)


@njit(**KERNEL)
def plane_cylinder(G1, G2, s2, margin, pc, k):
    """The rim point nearest the plane, the opposite rim's, and two more on the near rim
    (MuJoCo's ``mjc_PlaneCylinder``)."""
    n, p0, c = zaxis(G1), position(G1), position(G2)
    axis = zaxis(G2)
    prjaxis = dot(n, axis)
    if prjaxis > 0:
        axis = scale(axis, -1.0)
        prjaxis = -prjaxis
    dist0 = dot(sub(c, p0), n)
    vec = sub(scale(axis, prjaxis), n)          # -n without its component along the axis
    len_sqr = dot(vec, vec)
    if len_sqr >= MINVAL * MINVAL:
        vec = scale(vec, s2[0] / math.sqrt(len_sqr))
    else:                                       # the disk parallel to the plane
        vec = scale(xaxis(G2), s2[0])
    prjvec = dot(vec, n)
    axis = scale(axis, s2[1])
    prjaxis *= s2[1]
    d = dist0 + prjaxis + prjvec
    if d > margin:
        return 0
    emit(pc, k, add_scaled(add(add(c, vec), axis), n, -d * 0.5), n, d)
    m = 1
    d = dist0 - prjaxis + prjvec
    if d <= margin:
        emit(pc, k + m, add_scaled(sub(add(c, vec), axis), n, -d * 0.5), n, d)
        m += 1
    prjvec1 = -prjvec * 0.5
    d = dist0 + prjaxis + prjvec1
    if d <= margin:
        vec1, _ = normalize(cross3(vec, axis))
        vec1 = scale(vec1, s2[0] * math.sqrt(3.0) / 2)
        base = add_scaled(axis, vec, -0.5)
        emit(pc, k + m, add_scaled(add(add(c, vec1), base), n, -d * 0.5), n, d)
        emit(pc, k + m + 1, add_scaled(add(sub(c, vec1), base), n, -d * 0.5), n, d)
        m += 2
    return m


@njit(**KERNEL)
def plane_box(G1, G2, s2, margin, pc, k):
    """The first four corners (in MuJoCo's order) below the margin that face the plane
    (MuJoCo's ``mjc_PlaneBox``)."""
    n, c = zaxis(G1), position(G2)
    dist = dot(sub(c, position(G1)), n)
    m = 0
    for i in range(8):
        v = (s2[0] if i & 1 else -s2[0], s2[1] if i & 2 else -s2[1], s2[2] if i & 4 else -s2[2])
        corner = rotate(G2, v)
        ldist = dot(n, corner)
        if dist + ldist > margin or ldist > 0:
            continue
        d = dist + ldist
        emit(pc, k + m, add_scaled(add(corner, c), n, -d / 2), n, d)
        m += 1
        if m >= 4:
            break
    return m


@njit(**HELPER)
def vertex_dot(V, i, u):
    return u[0] * V[i, 0] + u[1] * V[i, 1] + u[2] * V[i, 2]


@njit(**KERNEL)
def hull_support(V, adr, num, graph, ga, u):
    """The row of ``V[adr:adr + num]`` of largest ``u . v``. With the polytope's vertex graph at
    ``graph[ga:]`` (``ga >= 0``; :func:`screwdyn.collision.hull_graph`: its six axis-extreme
    vertices, then the CSR offsets and neighbours of each vertex, local indices): from the best of
    the six, to the best neighbour while one is better (a vertex no neighbour of which is better
    is the maximum of a linear function on a convex polytope); else every vertex."""
    if ga < 0:
        best, ib = -math.inf, adr
        for i in range(adr, adr + num):
            x = vertex_dot(V, i, u)
            if x > best:
                best, ib = x, i
        return ib
    best, cur = -math.inf, adr
    for j in range(6):
        i = adr + graph[ga + j]
        x = vertex_dot(V, i, u)
        if x > best:
            best, cur = x, i
    off = ga + 6
    nbr = off + num + 1
    for _ in range(num):
        step = cur
        for e in range(graph[off + cur - adr], graph[off + cur - adr + 1]):
            i = adr + graph[nbr + e]
            x = vertex_dot(V, i, u)
            if x > best:
                best, step = x, i
        if step == cur:
            break
        cur = step
    return cur


@njit(**KERNEL)
def plane_convex(G1, G2, V, adr, num, graph, ga, margin, pc, k, S):
    """A polytope of vertices ``V[adr:adr + num]`` (its frame's coordinates; its vertex graph at
    ``graph[ga:]``) against the plane: the deepest vertex (:func:`hull_support`) and, among the
    vertices within the margin (those connected to it through others within it, in the graph),
    up to three more spread over the support patch (see the module docstring). ``S``: scratch
    rows (x, y, z) for the patch's vertex indices."""
    n, p0, c = zaxis(G1), position(G1), position(G2)
    u = rotate_back(G2, n)                     # the normal in the polytope's frame
    d0 = dot(sub(c, p0), n)
    ib = hull_support(V, adr, num, graph, ga, (-u[0], -u[1], -u[2]))
    best = d0 + vertex_dot(V, ib, u)
    if best > margin:
        return 0
    v0 = (V[ib, 0], V[ib, 1], V[ib, 2])
    emit(pc, k, add_scaled(add(rotate(G2, v0), c), n, -best / 2), n, best)
    # the patch: the vertices within the margin, by a walk over the graph from v0 (every vertex
    # without a graph), their indices in the scratch rows' cells
    cells = S.shape[0] * 3
    flat = S.reshape(-1)
    found = 0
    if ga < 0:
        for i in range(adr, adr + num):
            if d0 + vertex_dot(V, i, u) <= margin and found < cells:
                flat[found] = i
                found += 1
    else:
        flat[0] = ib
        found, head = 1, 0
        off = ga + 6
        nbr = off + num + 1
        while head < found:
            cur = int(flat[head])
            head += 1
            for e in range(graph[off + cur - adr], graph[off + cur - adr + 1]):
                i = adr + graph[nbr + e]
                if d0 + vertex_dot(V, i, u) > margin:
                    continue
                seen = False
                for t in range(found):
                    seen |= flat[t] == i
                if not seen and found < cells:
                    flat[found] = i
                    found += 1
    if found <= 1:
        return 1
    far, ifar = 0.0, -1                        # the farthest from v0 in the plane
    for t in range(found):
        i = int(flat[t])
        w = (V[i, 0] - v0[0], V[i, 1] - v0[1], V[i, 2] - v0[2])
        wn = dot(w, u)
        r2 = dot(w, w) - wn * wn
        if r2 > far:
            far, ifar = r2, i
    tiny = 1e-18 * max(far, 1e-300)
    if ifar < 0 or far <= 1e-24:
        return 1
    e = (V[ifar, 0] - v0[0], V[ifar, 1] - v0[1], V[ifar, 2] - v0[2])
    hi, ihi, lo, ilo = 0.0, -1, 0.0, -1        # signed areas on either side of the line v0 -> v_far
    for t in range(found):
        i = int(flat[t])
        a = dot(cross3(e, (V[i, 0] - v0[0], V[i, 1] - v0[1], V[i, 2] - v0[2])), u)
        if a > hi:
            hi, ihi = a, i
        if a < lo:
            lo, ilo = a, i
    m = 1
    for i in (ifar, ihi, ilo):
        if i < 0 or (i != ifar and (hi if i == ihi else -lo) <= tiny):
            continue
        v = (V[i, 0], V[i, 1], V[i, 2])
        d = d0 + dot(u, v)
        emit(pc, k + m, add_scaled(add(rotate(G2, v), c), n, -d / 2), n, d)
        m += 1
    return m


# ---------------------------------------------------------------------------------- spheres, capsules
@njit(**HELPER)
def sphere_sphere_raw(pc, k, c1, z1, r1, c2, z2, r2, margin):
    """Spheres of radii ``r1``, ``r2`` at ``c1``, ``c2`` (``z1``, ``z2``: their shapes' z axes, whose
    cross product is the normal when the centres coincide): MuJoCo's ``mjraw_SphereSphere``."""
    dif = sub(c1, c2)
    cdist_sqr = dot(dif, dif)
    min_dist = margin + r1 + r2
    if cdist_sqr > min_dist * min_dist:
        return 0
    d = math.sqrt(cdist_sqr) - r1 - r2
    n, length = normalize(sub(c2, c1))
    if length < MINVAL:
        n, _ = normalize(cross3(z1, z2))
    emit(pc, k, add_scaled(c1, n, r1 + d / 2), n, d)
    return 1


@njit(**KERNEL)
def sphere_sphere(G1, s1, G2, s2, margin, pc, k):
    return sphere_sphere_raw(pc, k, position(G1), zaxis(G1), s1[0], position(G2), zaxis(G2), s2[0],
                             margin)


@njit(**KERNEL)
def sphere_capsule(G1, s1, G2, s2, margin, pc, k):
    """The sphere against the nearest point of the capsule's segment (MuJoCo's ``mjraw_SphereCapsule``)."""
    c1, c2, axis = position(G1), position(G2), zaxis(G2)
    x = clip(dot(axis, sub(c1, c2)), -s2[1], s2[1])
    return sphere_sphere_raw(pc, k, c1, zaxis(G1), s1[0], add_scaled(c2, axis, x), axis, s2[0], margin)


@njit(**KERNEL)
def sphere_cylinder(G1, s1, G2, s2, margin, pc, k):
    """The cylinder's side, one of its caps or a rim point (MuJoCo's ``mjc_SphereCylinder``)."""
    c1, c2, axis = position(G1), position(G2), zaxis(G2)
    radius, height = s2[0], s2[1]
    vec = sub(c1, c2)
    x = dot(axis, vec)
    a_proj = scale(axis, x)
    p_proj = sub(vec, a_proj)
    p_proj_sqr = dot(p_proj, p_proj)
    side = abs(x) < height
    cap = p_proj_sqr < radius * radius
    if side and cap:                           # the centre inside: the nearer of side and cap
        if height - abs(x) < radius - math.sqrt(p_proj_sqr):
            side = False
        else:
            cap = False
    if side:
        return sphere_sphere_raw(pc, k, c1, zaxis(G1), s1[0], add(a_proj, c2), axis, radius, margin)
    if cap:
        sgn = 1.0 if x > 0 else -1.0
        capc = add_scaled(c2, axis, sgn * height)
        nz = scale(axis, sgn)                   # the cap's outward normal
        m = plane_point(pc, k, nz, capc, c1, s1[0], margin)
        if m:
            pc[k, 3], pc[k, 4], pc[k, 5] = -pc[k, 3], -pc[k, 4], -pc[k, 5]
        return m
    rim = add(add(scale(p_proj, radius / math.sqrt(p_proj_sqr)), scale(axis, height if x > 0 else -height)), c2)
    return sphere_sphere_raw(pc, k, c1, zaxis(G1), s1[0], rim, axis, 0.0, margin)


@njit(**KERNEL)
def capsule_capsule(G1, s1, G2, s2, margin, pc, k):
    """The nearest points of the two segments as spheres; for parallel segments, up to two pairs
    (MuJoCo's ``mjraw_CapsuleCapsule``)."""
    c1, c2, z1, z2 = position(G1), position(G2), zaxis(G1), zaxis(G2)
    axis1, axis2 = scale(z1, s1[1]), scale(z2, s2[1])
    dif = sub(c1, c2)
    ma, mb, mc = dot(axis1, axis1), -dot(axis1, axis2), dot(axis2, axis2)
    u, v = -dot(axis1, dif), dot(axis2, dif)
    det = ma * mc - mb * mb
    r1, r2 = s1[0], s2[0]
    if abs(det) >= MINVAL:
        x1 = (mc * u - mb * v) / det
        x2 = (ma * v - mb * u) / det
        if x1 > 1:
            x1 = 1.0
            x2 = (v - mb) / mc
        elif x1 < -1:
            x1 = -1.0
            x2 = (v + mb) / mc
        if x2 > 1:
            x2 = 1.0
            x1 = clip((u - mb) / ma, -1.0, 1.0)
        elif x2 < -1:
            x2 = -1.0
            x1 = clip((u + mb) / ma, -1.0, 1.0)
        return sphere_sphere_raw(pc, k, add_scaled(c1, axis1, x1), z1, r1, add_scaled(c2, axis2, x2), z2, r2, margin)
    m = sphere_sphere_raw(pc, k, add(c1, axis1), z1, r1, add_scaled(c2, axis2, clip((v - mb) / mc, -1.0, 1.0)), z2,
                          r2, margin)
    m += sphere_sphere_raw(pc, k + m, sub(c1, axis1), z1, r1,
                           add_scaled(c2, axis2, clip((v + mb) / mc, -1.0, 1.0)), z2, r2, margin)
    if m >= 2:
        return m
    m += sphere_sphere_raw(pc, k + m, add_scaled(c1, axis1, clip((u - mb) / ma, -1.0, 1.0)), z1, r1,
                           add(c2, axis2), z2, r2, margin)
    if m >= 2:
        return m
    m += sphere_sphere_raw(pc, k + m, add_scaled(c1, axis1, clip((u + mb) / ma, -1.0, 1.0)), z1, r1,
                           sub(c2, axis2), z2, r2, margin)
    return m


# ---------------------------------------------------------------------------------- boxes
@njit(**HELPER)
def sphere_box_raw(pc, k, c1, r1, G2, s2, margin):
    """A sphere of radius ``r1`` at ``c1`` against the box (MuJoCo's ``mjraw_SphereBox``): the
    nearest point of the box, or from inside the nearest face."""
    center = rotate_back(G2, sub(c1, position(G2)))
    clamped = (clip(center[0], -s2[0], s2[0]), clip(center[1], -s2[1], s2[1]), clip(center[2], -s2[2], s2[2]))
    tmp, dist = normalize(sub(clamped, center))
    if dist - r1 > margin:
        return 0
    if dist <= MINVAL:                          # the centre inside the box
        closest = (s2[0] + s2[1] + s2[2]) * 2
        kbest = 0
        for i in range(6):
            face = (1.0 if i % 2 else -1.0) * s2[i // 2] - center[i // 2]
            if closest > abs(face):
                closest = abs(face)
                kbest = i
        sgn = -1.0 if kbest % 2 else 1.0
        nearest = (sgn if kbest // 2 == 0 else 0.0, sgn if kbest // 2 == 1 else 0.0, sgn if kbest // 2 == 2 else 0.0)
        pos = add_scaled(center, nearest, (r1 - closest) / 2)
        n = rotate(G2, nearest)
        dist = -closest
    else:
        deepest = add_scaled(center, tmp, r1)
        pos = scale(add(clamped, deepest), 0.5)
        n = rotate(G2, tmp)
    emit(pc, k, add(rotate(G2, pos), position(G2)), n, dist - r1)
    return 1


@njit(**KERNEL)
def sphere_box(G1, s1, G2, s2, margin, pc, k):
    return sphere_box_raw(pc, k, position(G1), s1[0], G2, s2, margin)


@njit(**HELPER)
def segment_candidate(i, c, a, h):
    """Candidate ``i`` (0 to 49) for the minimum of the signed distance from ``c + t a`` to the box
    of half sizes ``h`` (:func:`segment_box_nearest`): ``t``, or 2 when there is none."""
    if i < 2:                                  # the ends
        return 2.0 * i - 1.0
    if i < 11:                                 # a coordinate crossing -h, 0 or h
        j, o = (i - 2) // 3, (i - 2) % 3 - 1
        aj, cj, hj = (a[0], c[0], h[0]) if j == 0 else (a[1], c[1], h[1]) if j == 1 else (a[2], c[2], h[2])
        return (o * hj - cj) / aj if aj != 0.0 else 2.0
    if i < 23:                                 # two face distances equal: s_u x_u - h_u = s_v x_v - h_v
        m = i - 11
        pair, su, sv = m // 4, 1.0 if m % 2 else -1.0, 1.0 if (m // 2) % 2 else -1.0
        u, v = (0, 1) if pair == 0 else (0, 2) if pair == 1 else (1, 2)
        au, cu, hu = (a[0], c[0], h[0]) if u == 0 else (a[1], c[1], h[1])
        av, cv, hv = (a[1], c[1], h[1]) if v == 1 else (a[2], c[2], h[2])
        den = su * au - sv * av
        return (hu - hv - su * cu + sv * cv) / den if den != 0.0 else 2.0
    p = i - 23                                 # the stationary point of the squared distance of a
    num, den = 0.0, 0.0                        # pattern of coordinates below (-1), inside, above (1)
    for j in range(3):
        side = p % 3 - 1
        p //= 3
        aj, cj, hj = (a[0], c[0], h[0]) if j == 0 else (a[1], c[1], h[1]) if j == 1 else (a[2], c[2], h[2])
        if side != 0:
            num += aj * (cj - side * hj)
            den += aj * aj
    return -num / den if den > 0.0 else 2.0


@njit(**INLINE)
def segment_box_nearest(c, a, h):
    """The parameter ``t`` in [-1, 1] minimising the signed distance from ``c + t a`` to the box of
    half sizes ``h`` (all in the box's frame). The distance is convex along the segment, linear or
    quadratic between breakpoints, so its minimum is at an end, a breakpoint (a coordinate crossing
    a face plane or 0, two face distances equal) or a stationary point of a quadratic piece (each
    of the 27 patterns of coordinates below, inside, above the box): all 50 are tried, the first
    of equal distances kept."""
    best_t, best = -1.0, math.inf
    for i in range(50):
        t = segment_candidate(i, c, a, h)
        if -1.0 <= t <= 1.0:
            p = add_scaled(c, a, t)
            q0, q1, q2 = abs(p[0]) - h[0], abs(p[1]) - h[1], abs(p[2]) - h[2]
            o0, o1, o2 = max(q0, 0.0), max(q1, 0.0), max(q2, 0.0)
            f = math.sqrt(o0 * o0 + o1 * o1 + o2 * o2) + min(max(q0, max(q1, q2)), 0.0)
            if f < best:
                best_t, best = t, f
    return best_t


@njit(**KERNEL)
def capsule_box(G1, s1, G2, s2, margin, pc, k):
    """The nearest point of the capsule's segment to the box as a sphere-box contact, and the
    segment's ends when they touch with a normal within 45 degrees of it (see the module docstring)."""
    c1, z1, r1, hl = position(G1), zaxis(G1), s1[0], s1[1]
    c = rotate_back(G2, sub(c1, position(G2)))
    a = rotate_back(G2, scale(z1, hl))
    t = segment_box_nearest(c, a, s2)
    m = sphere_box_raw(pc, k, add_scaled(c1, z1, t * hl), r1, G2, s2, margin)
    if m == 0:
        return 0
    n0 = (pc[k, 3], pc[k, 4], pc[k, 5])
    for end in (-1.0, 1.0):
        if abs(end - t) * hl <= 1e-9 * (hl + r1):
            continue
        if sphere_box_raw(pc, k + m, add_scaled(c1, z1, end * hl), r1, G2, s2, margin):
            if dot(n0, (pc[k + m, 3], pc[k + m, 4], pc[k + m, 5])) >= math.sqrt(0.5):
                m += 1
    return m
