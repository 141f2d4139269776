"""GJK and EPA: the contact of two convex shapes given by their support functions (docs/theory.md §16.6).

Each shape is a *core* and a radius: a sphere is its centre and its radius, a capsule its segment
and its radius, a cylinder, box or polytope itself with radius 0. The support point of a core in
the world direction ``d`` is ``s(d) = argmax_{x in core} d . x``:

* a point: the centre; a segment: ``c + sign(d . a) h a``;
* a cylinder: ``c + sign(d . a) h a + r u``, ``u`` the unit part of ``d`` orthogonal to the axis ``a``;
* a box: ``c + sum_i sign(d . e_i) h_i e_i``; a polytope: its vertex of largest ``d . v``.

GJK (Gilbert, Johnson and Keerthi 1988) finds the point ``v`` of the Minkowski difference
``D = core_1 - core_2`` nearest the origin: a simplex of support points ``w = s_1(-v) - s_2(v)``,
each step replaced by its smallest face that holds the point nearest the origin (the Voronoi
regions of a segment, triangle, tetrahedron, Ericson 2005 §5.1), until ``|v|^2 - v . w <= 1e-12
|v|^2`` (``v`` within ``1e-6`` relative of the distance). When the cores are apart, their distance
is ``|v|``, the nearest points ``a = sum lambda_i a_i``, ``b = sum lambda_i b_i`` and the normal
from 1 into 2 ``-v / |v|``.

When they overlap (the origin inside ``D``), EPA (van den Bergen 2001) grows GJK's last simplex,
a tetrahedron around the origin, into a polytope inside ``D``: the face nearest the origin, of
outward normal ``n`` at distance ``delta``, is pushed out by the support point along ``n`` until
that point is within ``1e-9`` (relative) of the face; then ``delta`` is the penetration depth (the
shortest translation that separates the cores), ``n`` the normal from 1 into 2, and the nearest
face's barycentric weights of ``delta n`` give the two deepest points. At most 128 vertices and
256 faces: a polytope still growing then stops with the nearest face found, a lower bound of the
depth (for polytopes EPA ends exactly; for cylinders 5 cm deep into each other, within 1e-5 m).

The contact's distance is the cores' (signed) distance less the radii, its point midway between
the surfaces. One contact per pair.
"""
import math

from .narrowphase import (
    BOX, CAPSULE, CYLINDER, SPHERE, add, add_scaled, cross3, dot, emit, hull_support, rotate, rotate_back, sub,
)
from .target import HELPER, KERNEL, njit

GJK_ITERATIONS = 64
EPA_VERTICES = 128
EPA_FACES = 256
EPA_EDGES = 64
# rows of the scratch array (x, y, z): the simplex (4 points: w, a, b each), the nearest points a, b of
# the simplex, EPA's vertices (w, a, b), faces (vertex indices; unit normal; distance and a live flag)
# and horizon edges (two vertex indices and a live flag)
_A, _B = 12, 13
_VERT = 14
_FACE = _VERT + 3 * EPA_VERTICES
_EDGE = _FACE + 3 * EPA_FACES
GJK_WORK = _EDGE + EPA_EDGES


@njit(**KERNEL)
def support(G, s, sh, V, graph, d):
    """The support point of the core of a shape (pose ``G``, half sizes ``s``, ``sh = (kind, adr,
    num, ga)``: a polytope's vertices ``V[adr:adr + num]``, its vertex graph at ``graph[ga:]``) in
    the world direction ``d``."""
    kind = sh[0]
    u = rotate_back(G, d)
    if kind == SPHERE:
        p = (0.0, 0.0, 0.0)
    elif kind == CAPSULE:
        p = (0.0, 0.0, s[1] if u[2] >= 0 else -s[1])
    elif kind == CYLINDER:
        rxy = math.sqrt(u[0] * u[0] + u[1] * u[1])
        k = s[0] / rxy if rxy > 0 else 0.0
        p = (u[0] * k if rxy > 0 else s[0], u[1] * k, s[1] if u[2] >= 0 else -s[1])
    elif kind == BOX:
        p = (s[0] if u[0] >= 0 else -s[0], s[1] if u[1] >= 0 else -s[1], s[2] if u[2] >= 0 else -s[2])
    else:
        ib = hull_support(V, sh[1], sh[2], graph, sh[3], u)
        p = (V[ib, 0], V[ib, 1], V[ib, 2])
    return add(rotate(G, p), (G[9], G[10], G[11]))


@njit(**HELPER)
def radius(kind, s):
    """The radius around a shape's core: a sphere's and a capsule's, else 0."""
    return s[0] if kind == SPHERE or kind == CAPSULE else 0.0


@njit(**HELPER)
def row3(S, r):
    return S[r, 0], S[r, 1], S[r, 2]


@njit(**HELPER)
def put3(S, r, x):
    S[r, 0], S[r, 1], S[r, 2] = x


@njit(**KERNEL)
def minkowski(G1, s1, sh1, G2, s2, sh2, V, graph, d, S, r):
    """The support point of ``D = core_1 - core_2`` in the direction ``d`` into rows ``r`` (w),
    ``r + 1`` (core 1's point), ``r + 2`` (core 2's) of ``S``; returns ``w``."""
    a = support(G1, s1, sh1, V, graph, d)
    b = support(G2, s2, sh2, V, graph, (-d[0], -d[1], -d[2]))
    w = sub(a, b)
    put3(S, r, w)
    put3(S, r + 1, a)
    put3(S, r + 2, b)
    return w


@njit(**HELPER)
def keep(S, m, l0, l1, l2, l3):
    """Keep the simplex points of nonzero weight ``l_i``, in order; the nearest points ``a``, ``b``
    into rows ``_A``, ``_B``; returns ``(how many, v)``."""
    out = 0
    v = a = b = (0.0, 0.0, 0.0)
    for i in range(m):
        li = l0 if i == 0 else l1 if i == 1 else l2 if i == 2 else l3
        if li > 0:
            v = add_scaled(v, row3(S, 3 * i), li)
            a = add_scaled(a, row3(S, 3 * i + 1), li)
            b = add_scaled(b, row3(S, 3 * i + 2), li)
            if out != i:
                for c in range(3):
                    put3(S, 3 * out + c, row3(S, 3 * i + c))
            out += 1
    put3(S, _A, a)
    put3(S, _B, b)
    return out, v


@njit(**HELPER)
def triangle_weights(A, B, C):
    """Barycentric weights of the point of triangle ``ABC`` nearest the origin (Ericson 2005, §5.1.5)."""
    ab, ac = sub(B, A), sub(C, A)
    ap = (-A[0], -A[1], -A[2])
    d1, d2 = dot(ab, ap), dot(ac, ap)
    if d1 <= 0 and d2 <= 0:
        return 1.0, 0.0, 0.0
    bp = (-B[0], -B[1], -B[2])
    d3, d4 = dot(ab, bp), dot(ac, bp)
    if d3 >= 0 and d4 <= d3:
        return 0.0, 1.0, 0.0
    vc = d1 * d4 - d3 * d2
    if vc <= 0 and d1 >= 0 and d3 <= 0:
        t = d1 / (d1 - d3)
        return 1.0 - t, t, 0.0
    cp = (-C[0], -C[1], -C[2])
    d5, d6 = dot(ab, cp), dot(ac, cp)
    if d6 >= 0 and d5 <= d6:
        return 0.0, 0.0, 1.0
    vb = d5 * d2 - d1 * d6
    if vb <= 0 and d2 >= 0 and d6 <= 0:
        t = d2 / (d2 - d6)
        return 1.0 - t, 0.0, t
    va = d3 * d6 - d5 * d4
    if va <= 0 and (d4 - d3) >= 0 and (d5 - d6) >= 0:
        t = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return 0.0, 1.0 - t, t
    den = 1.0 / (va + vb + vc)
    return va * den, vb * den, vc * den


@njit(**HELPER)
def reduce_simplex(S, m):
    """Replace the simplex ``S`` of ``m`` points by its smallest face holding the point nearest the
    origin; returns ``(points left, that point v)`` (4 points left: the origin inside)."""
    A = row3(S, 0)
    if m == 1:
        return 1, A
    B = row3(S, 3)
    if m == 2:
        ab = sub(B, A)
        den = dot(ab, ab)
        t = min(max(-dot(A, ab) / den, 0.0), 1.0) if den > 0 else 0.0
        return keep(S, 2, 1.0 - t, t, 0.0, 0.0)
    C = row3(S, 6)
    if m == 3:
        l0, l1, l2 = triangle_weights(A, B, C)
        return keep(S, 3, l0, l1, l2, 0.0)
    D = row3(S, 9)
    best, b0, b1, b2, b3 = math.inf, 0.0, 0.0, 0.0, 0.0
    e1, e2, e3 = sub(B, A), sub(C, A), sub(D, A)
    size = max(dot(e1, e1), dot(e2, e2), dot(e3, e3))
    flat = abs(dot(cross3(e1, e2), e3)) <= 1e-12 * size * math.sqrt(size)
    inside = not flat                        # a flat tetrahedron holds nothing: its faces are tried
    for f in range(4):                       # face f leaves out point f
        P, Q, R, X = (B, C, D, A) if f == 0 else (A, C, D, B) if f == 1 else (A, B, D, C) if f == 2 else (A, B, C, D)
        n = cross3(sub(Q, P), sub(R, P))
        if flat or dot(n, sub(X, P)) * dot(n, (-P[0], -P[1], -P[2])) < 0:   # the origin beyond face f
            inside = False
            l0, l1, l2 = triangle_weights(P, Q, R)
            x = add_scaled(add_scaled(scale3(P, l0), Q, l1), R, l2)
            d = dot(x, x)
            if d < best:
                best = d
                b0, b1, b2, b3 = ((0.0, l0, l1, l2) if f == 0 else (l0, 0.0, l1, l2) if f == 1
                                  else (l0, l1, 0.0, l2) if f == 2 else (l0, l1, l2, 0.0))
    if inside:
        return 4, (0.0, 0.0, 0.0)
    return keep(S, 4, b0, b1, b2, b3)


@njit(**HELPER)
def scale3(a, s):
    return a[0] * s, a[1] * s, a[2] * s


@njit(**KERNEL)
def gjk(G1, s1, sh1, G2, s2, sh2, V, graph, bound, S):
    """GJK on the cores: ``(points in the simplex, v)``, the simplex in ``S`` and its nearest points
    in rows ``_A``, ``_B``; 4 points: the cores overlap; -1: they are farther apart than ``bound``."""
    d = sub((G1[9], G1[10], G1[11]), (G2[9], G2[10], G2[11]))
    if dot(d, d) == 0:
        d = (1.0, 0.0, 0.0)
    v = minkowski(G1, s1, sh1, G2, s2, sh2, V, graph, d, S, 0)
    put3(S, _A, row3(S, 1))
    put3(S, _B, row3(S, 2))
    m = 1
    for _ in range(GJK_ITERATIONS):
        vv = dot(v, v)
        if vv == 0.0:
            break
        w = minkowski(G1, s1, sh1, G2, s2, sh2, V, graph, (-v[0], -v[1], -v[2]), S, 3 * m)
        vw = dot(v, w)
        if vw > 0 and vw * vw > vv * bound * bound:     # a separating plane farther than the bound
            return -1, v
        if vv - vw <= 1e-12 * vv:
            break
        repeat = False                                      # no new point: converged
        for i in range(m):
            x = sub(w, row3(S, 3 * i))
            repeat |= dot(x, x) <= 1e-24 * vv
        if repeat:
            break
        m, v = reduce_simplex(S, m + 1)
        if m == 4:
            break
    return m, v


@njit(**HELPER)
def face_normal(S, f):
    """The unit normal and distance from the origin of EPA face ``f`` (its plane), into its rows."""
    r = _FACE + 3 * f
    A = row3(S, _VERT + 3 * int(S[r, 0]))
    B = row3(S, _VERT + 3 * int(S[r, 1]))
    C = row3(S, _VERT + 3 * int(S[r, 2]))
    n = cross3(sub(B, A), sub(C, A))
    ln = math.sqrt(dot(n, n))
    if ln > 0:
        n = scale3(n, 1.0 / ln)
        S[r + 2, 0] = dot(n, A)
    else:                                   # a face of no area: never the nearest
        n = (0.0, 0.0, 1.0)
        S[r + 2, 0] = math.inf
    put3(S, r + 1, n)
    S[r + 2, 1] = 1.0


@njit(**HELPER)
def add_face(S, f, i, j, k):
    r = _FACE + 3 * f
    S[r, 0], S[r, 1], S[r, 2] = i, j, k
    face_normal(S, f)


@njit(**HELPER)
def add_edge(S, ne, i, j):
    """Add the horizon edge ``i -> j``, or cancel its reverse; returns the edge count."""
    for e in range(ne):
        r = _EDGE + e
        if S[r, 2] > 0 and S[r, 0] == j and S[r, 1] == i:
            S[r, 2] = 0.0
            return ne
    if ne < EPA_EDGES:
        S[_EDGE + ne, 0], S[_EDGE + ne, 1], S[_EDGE + ne, 2] = i, j, 1.0
        ne += 1
    return ne


@njit(**KERNEL)
def epa(G1, s1, sh1, G2, s2, sh2, V, graph, m, S):
    """EPA from GJK's simplex of ``m`` points: ``(depth, n, a, b)``, the normal from core 1 into
    core 2 and the deepest points of each core (``a - b = depth n``)."""
    for i in range(3 * m):                                  # the simplex: the first vertices
        put3(S, _VERT + i, row3(S, i))
    L = 0.0
    for i in range(m):
        L = max(L, math.sqrt(dot(row3(S, _VERT + 3 * i), row3(S, _VERT + 3 * i))))
    L = max(L, 1e-300)
    tol = 1e-12 * L
    w0 = row3(S, _VERT)
    if m == 4:                                              # a flat tetrahedron: grow its triangle again
        vol = dot(cross3(sub(row3(S, _VERT + 3), w0), sub(row3(S, _VERT + 6), w0)), sub(row3(S, _VERT + 9), w0))
        if abs(vol) <= 1e-9 * L * L * L:
            m = 3
    if m == 1:                                              # grow a point into a segment
        for t in range(6):
            d = (1.0 if t == 0 else -1.0 if t == 1 else 0.0, 1.0 if t == 2 else -1.0 if t == 3 else 0.0,
                 1.0 if t == 4 else -1.0 if t == 5 else 0.0)
            w = minkowski(G1, s1, sh1, G2, s2, sh2, V, graph, d, S, _VERT + 3)
            if dot(sub(w, w0), sub(w, w0)) > tol * tol:
                m = 2
                break
    if m == 2:                                              # a segment into a triangle
        e = sub(row3(S, _VERT + 3), w0)
        ax = (1.0, 0.0, 0.0) if abs(e[0]) <= min(abs(e[1]), abs(e[2])) else \
            (0.0, 1.0, 0.0) if abs(e[1]) <= abs(e[2]) else (0.0, 0.0, 1.0)
        d0 = cross3(e, ax)
        eh = scale3(e, 1.0 / math.sqrt(dot(e, e)))
        d1 = cross3(eh, d0)
        for t in range(6):
            c, sn = math.cos(t * math.pi / 3), math.sin(t * math.pi / 3)
            w = minkowski(G1, s1, sh1, G2, s2, sh2, V, graph, add_scaled(scale3(d0, c), d1, sn), S,
                          _VERT + 6)
            x = cross3(sub(w, w0), eh)
            if dot(x, x) > tol * tol:
                m = 3
                break
    if m == 3:                                              # a triangle into a tetrahedron
        nrm = cross3(sub(row3(S, _VERT + 3), w0), sub(row3(S, _VERT + 6), w0))
        w = minkowski(G1, s1, sh1, G2, s2, sh2, V, graph, nrm, S, _VERT + 9)
        if abs(dot(nrm, sub(w, w0))) <= tol * math.sqrt(dot(nrm, nrm)):
            w = minkowski(G1, s1, sh1, G2, s2, sh2, V, graph, scale3(nrm, -1.0), S, _VERT + 9)
        m = 4 if abs(dot(nrm, sub(w, w0))) > tol * math.sqrt(dot(nrm, nrm)) else 3
    if m < 4:                                               # a flat difference: touching, depth 0
        nrm = cross3(sub(row3(S, _VERT + 3), w0), sub(row3(S, _VERT + 6), w0)) if m == 3 else (0.0, 0.0, 1.0)
        ln = math.sqrt(dot(nrm, nrm))
        return 0.0, scale3(nrm, 1.0 / ln) if ln > 0 else (0.0, 0.0, 1.0), row3(S, _VERT + 1), row3(S, _VERT + 2)
    # the tetrahedron's faces, wound so that their normals point away from the fourth vertex
    for f in range(4):
        i, j, k, x = (0, 1, 2, 3) if f == 0 else (0, 3, 1, 2) if f == 1 else (0, 2, 3, 1) if f == 2 else (1, 3, 2, 0)
        add_face(S, f, i, j, k)
        r = _FACE + 3 * f
        if dot(row3(S, r + 1), sub(row3(S, _VERT + 3 * x), row3(S, _VERT + 3 * i))) > 0:
            add_face(S, f, i, k, j)
    nv, nf = 4, 4
    best = 0
    while True:
        best, dbest = -1, math.inf
        for f in range(nf):
            r = _FACE + 3 * f
            if S[r + 2, 1] > 0 and S[r + 2, 0] < dbest:
                best, dbest = f, S[r + 2, 0]
        rb = _FACE + 3 * best
        n = row3(S, rb + 1)
        if nv >= EPA_VERTICES:
            break
        w = minkowski(G1, s1, sh1, G2, s2, sh2, V, graph, n, S, _VERT + 3 * nv)
        if dot(n, w) - dbest <= 1e-9 * max(dbest, 1e-3 * L):
            break
        ne = 0
        for f in range(nf):                                 # faces seen from w go; their rim stays
            r = _FACE + 3 * f
            if S[r + 2, 1] > 0 and dot(row3(S, r + 1), sub(w, row3(S, _VERT + 3 * int(S[r, 0])))) > tol:
                S[r + 2, 1] = 0.0
                i, j, k = S[r, 0], S[r, 1], S[r, 2]
                ne = add_edge(S, ne, i, j)
                ne = add_edge(S, ne, j, k)
                ne = add_edge(S, ne, k, i)
        live = 0
        for e in range(ne):
            live += S[_EDGE + e, 2] > 0
        if nf + live > EPA_FACES or live == 0:
            break
        for e in range(ne):
            if S[_EDGE + e, 2] > 0:
                add_face(S, nf, S[_EDGE + e, 0], S[_EDGE + e, 1], nv)
                nf += 1
        nv += 1
    r = _FACE + 3 * best
    n = row3(S, r + 1)
    depth = S[r + 2, 0]
    ia, ib, ic = int(S[r, 0]), int(S[r, 1]), int(S[r, 2])
    p = scale3(n, depth)
    l0, l1, l2 = triangle_weights(sub(row3(S, _VERT + 3 * ia), p), sub(row3(S, _VERT + 3 * ib), p),
                                  sub(row3(S, _VERT + 3 * ic), p))
    a = add_scaled(add_scaled(scale3(row3(S, _VERT + 3 * ia + 1), l0), row3(S, _VERT + 3 * ib + 1), l1),
                   row3(S, _VERT + 3 * ic + 1), l2)
    b = add_scaled(add_scaled(scale3(row3(S, _VERT + 3 * ia + 2), l0), row3(S, _VERT + 3 * ib + 2), l1),
                   row3(S, _VERT + 3 * ic + 2), l2)
    return depth, n, a, b


@njit(**KERNEL)
def convex_pair(G1, s1, sh1, G2, s2, sh2, V, graph, margin, pc, k, S):
    """One contact of two convex shapes (``sh = (kind, adr, num, ga)``, :func:`support`) from GJK
    (cores apart) or EPA (cores overlapping), into row ``k`` of ``pc``, the normal from 1 into 2;
    returns 0 or 1."""
    r1, r2 = radius(sh1[0], s1), radius(sh2[0], s2)
    m, v = gjk(G1, s1, sh1, G2, s2, sh2, V, graph, r1 + r2 + margin, S)
    if m < 0:
        return 0
    vv = dot(v, v)
    if m < 4 and vv > 0:
        dc = math.sqrt(vv)
        if dc - r1 - r2 > margin:
            return 0
        n = scale3(v, -1.0 / dc)
        a, b = row3(S, _A), row3(S, _B)
        d = dc - r1 - r2
    else:
        depth, n, a, b = epa(G1, s1, sh1, G2, s2, sh2, V, graph, m, S)
        d = -depth - r1 - r2
    pa = add_scaled(a, n, r1)                               # the surfaces' points along the normal
    pb = add_scaled(b, n, -r2)
    emit(pc, k, scale3(add(pa, pb), 0.5), n, d)
    return 1
