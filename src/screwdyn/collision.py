"""Contacts of a model's collision geometry with its environment and itself: :func:`detect`.

``detect(model, q, environment)`` returns the contacts at one configuration ``q (nq,)`` or a batch
``(..., nq)`` as :class:`Contacts`: ``data (..., K, WIDTH)`` in the documented layout of
:mod:`screwdyn.algorithms.collide` (body, geometry ids, point, normal from B into A, contact frame,
signed distance, friction, restitution, solref, solimp, margin, condim, pair and slot) and
``count (...)``, the contacts found (the first ``min(count, K)`` rows hold them, the deepest ``K``
when more were found). ``K`` is fixed per call (``max_contacts``), so batches are arrays.

What collides (the candidate pairs, made once per model, environment and options by
:func:`collider`):

* every geometry of a moving body (``model.collisions``) with every obstacle of the environment
  (``environment.obstacles``; by default ``model.environment``);
* with ``self_collision=True``, the model's geometries with each other, except on one body and
  on a body and its parent (MuJoCo's default filter; bodies of no mass and no geometry between
  them, the links of a multi-joint MJCF body, are looked through; screwdyn also filters a body
  against the fixed base it hangs from, which MuJoCo exempts);
* in both, only when MuJoCo's bit masks allow: ``(a.contype & b.conaffinity) or (b.contype &
  a.conaffinity)``.

A pair's parameters follow MuJoCo's rules (``mj_contactParam``): the geometry of higher ``priority``
sets them all; at equal priorities ``condim`` is the larger, ``friction`` the element-wise larger,
``solref`` and ``solimp`` the ``solmix``-weighted mean (``solref`` the element-wise smaller when
either is given as negative stiffness and damping), ``margin`` and ``gap`` the sums. screwdyn's
additions: ``restitution`` as friction; a geometry that states no friction or restitution (a
URDF's: URDF has none) takes the other's (MuJoCo's default friction ``(1, 0.005, 0.0001)`` and 0
when neither states one).
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from . import dispatch
from .algorithms import collide as _c
from .algorithms.narrowphase import BOX, CAPSULE, CONVEX, CYLINDER, PLANE, SPHERE
from .environment import Environment
from .errors import CollisionWarning, InputError, ModelError
from .geometry import COLLISION_KINDS, DEFAULT_FRICTION, Collision
from .model import Model

__all__ = ["Collider", "Contacts", "collider", "detect", "hull_graph", "DEFAULT_MAX_CONTACTS"]

KIND_CODE = {"plane": PLANE, "sphere": SPHERE, "capsule": CAPSULE, "cylinder": CYLINDER, "box": BOX,
             "convex": CONVEX}
assert tuple(KIND_CODE) == tuple(COLLISION_KINDS)
DEFAULT_MAX_CONTACTS = 64     # K when not given: the most contacts the pairs can make, at most this

# the narrow phase in two kernels (screwdyn.algorithms.collide): planes against anything (legged robots
# on the ground, the common case, compile and run the smaller) and any pairs
_KERNELS = {tier: dispatch.Kernel("collide", tier) for tier in ("ground", "general")}


def max_pair_contacts(kind_a: str, kind_b: str) -> int:
    """The most contacts the narrow phase of two kinds writes."""
    a, b = sorted((KIND_CODE[kind_a], KIND_CODE[kind_b]))
    if a == PLANE:
        return {SPHERE: 1, CAPSULE: 2}.get(b, 4)
    if a == SPHERE:
        return 1
    if (a, b) == (CAPSULE, CAPSULE):
        return 2
    if (a, b) == (CAPSULE, BOX):
        return 3
    if (a, b) == (BOX, BOX):
        return 4
    return 1


class Contacts(NamedTuple):
    """Contacts of one state or a batch (:func:`detect`): ``data (..., K, WIDTH)`` in the layout of
    :mod:`screwdyn.algorithms.collide`, ``count`` the number found (an ``int`` for one state, an
    int64 array ``(...)`` for a batch). Unpacks as ``data, count``; the properties are views of
    ``data``'s columns."""

    data: np.ndarray
    count: np.ndarray

    def _col(self, c, k=None):
        return self.data[..., c] if k is None else self.data[..., c:c + k]

    @property
    def active(self) -> np.ndarray:
        """``(..., K)`` bool: the rows that hold a contact."""
        K = self.data.shape[-2]
        return np.arange(K) < np.minimum(np.asarray(self.count), K)[..., None]

    body_a = property(lambda self: self._col(_c.BODY_A).astype(np.int64), doc="(..., K) body of side A")
    body_b = property(lambda self: self._col(_c.BODY_B).astype(np.int64), doc="(..., K) body of side B (-1: world)")
    geom_a = property(lambda self: self._col(_c.GEOM_A).astype(np.int64), doc="(..., K) index in model.collisions")
    geom_b = property(lambda self: self._col(_c.GEOM_B).astype(np.int64),
                      doc="(..., K) index in model.collisions, or -1 - k: obstacle k of the environment")
    pos = property(lambda self: self._col(_c.POS, 3), doc="(..., K, 3) contact points, world frame [m]")
    normal = property(lambda self: self._col(_c.NORMAL, 3), doc="(..., K, 3) unit normals from B into A")
    dist = property(lambda self: self._col(_c.DIST), doc="(..., K) signed distance (< 0: penetration) [m]")
    mu = property(lambda self: self._col(_c.MU), doc="(..., K) sliding friction coefficients")
    restitution = property(lambda self: self._col(_c.RESTITUTION), doc="(..., K) coefficients of restitution")

    @property
    def frame(self) -> np.ndarray:
        """``(..., K, 3, 3)``: rows normal, tangent 1, tangent 2 (MuJoCo's ``mjContact.frame``)."""
        return self.data[..., _c.NORMAL:_c.TANGENT2 + 3].reshape(self.data.shape[:-1] + (3, 3))

    def __repr__(self):
        c = np.asarray(self.count)
        what = f"{int(c)} found" if c.ndim == 0 else f"batch {c.shape}, {int(c.sum())} found"
        return f"Contacts({what}, K={self.data.shape[-2]})"


class Collider:
    """What :func:`detect` needs of a model and an environment, packed once: the tables of
    :mod:`screwdyn.algorithms.collide` (``geoms``, ``pairs``, ``vertices``, read-only) and
    ``max_contacts`` (``K``), and ``graph`` (int64, the polytopes' vertex graphs, :func:`hull_graph`).
    A compiled caller passes the tables to
    ``screwdyn.algorithms.collide.collide_state`` with the narrow phase of ``tier``: ``"ground"``
    (``ground_pair``: every pair has a plane) or ``"general"`` (``general_pair``: any pairs; a
    polytope or a cylinder against a shape other than a plane or a sphere by GJK and EPA). Also:
    ``environment`` (the one used), ``geometry`` (the :class:`~screwdyn.geometry.Collision` record
    of each row of ``geoms``) and ``bound`` (the most contacts the pairs can make)."""

    def __init__(self, model: Model, environment=None, *, self_collision=False, max_contacts=None):
        dispatch.check_model(model)
        env = _environment(model, environment)
        self.model, self.environment, self.self_collision = model, env, bool(self_collision)
        records, body_of, pose_of, ids, unread = [], [], [], [], []
        for i, c in enumerate(model.collisions):
            if c.kind == "convex":
                try:
                    c.hull()
                except OSError as e:
                    unread.append(str(e))
                    continue
            k = model.frame_index(c.link)
            records.append(c)
            body_of.append(int(model.frame_body[k]))
            pose_of.append(model.frame_pose[k] @ c.origin)
            ids.append(i)
        if unread:
            warnings.warn("collision geometry left out (it does not collide): " + "; ".join(unread), CollisionWarning,
                          stacklevel=3)
        nmodel = len(records)
        for k, o in enumerate(env.obstacles):
            records.append(o)
            body_of.append(-1)
            pose_of.append(np.array(o.origin))
            ids.append(-1 - k)
        if len(records) > _c.MAX_GEOMS:
            raise ModelError(f"{len(records)} collision geometries (model and environment): at most "
                             f"{_c.MAX_GEOMS} are taken")
        self.geometry = tuple(records)
        self.geoms, self.vertices, self.graph = _geom_table(model, records, body_of, pose_of)
        pairs = []
        for a in range(nmodel):
            if body_of[a] < 0:
                continue
            for b in range(nmodel, len(records)):
                if _masks(records[a], records[b]):
                    pairs.append((a, b))
        if self_collision:
            parent = _filter_parents(model, body_of[:nmodel])
            for a in range(nmodel):
                for b in range(a + 1, nmodel):
                    ba, bb = body_of[a], body_of[b]
                    if ba == bb or max(ba, bb) < 0 or parent[max(ba, bb)] == min(ba, bb) \
                            or (min(ba, bb) >= 0 and parent[min(ba, bb)] == max(ba, bb)):
                        continue
                    if _masks(records[a], records[b]):
                        pairs.append((a, b) if ba > bb else (b, a))
        table = np.zeros((len(pairs), _c.PAIR_WIDTH))
        bound = 0
        for p, (a, b) in enumerate(pairs):
            row = table[p]
            row[_c.P_A], row[_c.P_B] = a, b
            row[_c.P_BODY_A], row[_c.P_BODY_B] = body_of[a], body_of[b]
            row[_c.P_GEOM_A], row[_c.P_GEOM_B] = ids[a], ids[b]
            _mix(records[a], records[b], row)
            bound += max_pair_contacts(records[a].kind, records[b].kind)
        self.pairs = table
        self.bound = bound
        kinds = {tuple(sorted((KIND_CODE[records[a].kind], KIND_CODE[records[b].kind]))) for a, b in pairs}
        self.tier = "ground" if all(k[0] == PLANE for k in kinds) else "general"
        if max_contacts is None:
            K = max(1, min(bound, DEFAULT_MAX_CONTACTS))
        elif isinstance(max_contacts, (int, np.integer)) and max_contacts >= 1:
            K = int(max_contacts)
        else:
            raise InputError(f"max_contacts must be a whole number >= 1, got {max_contacts!r}")
        self.max_contacts = K
        for a in (self.geoms, self.pairs, self.vertices, self.graph):
            a.setflags(write=False)

    @property
    def pair_geometry(self) -> list:
        """The ``(A, B)`` :class:`~screwdyn.geometry.Collision` records of each candidate pair."""
        return [(self.geometry[int(a)], self.geometry[int(b)]) for a, b in self.pairs[:, :2]]

    def __repr__(self):
        return (f"Collider({self.model.name!r}, {len(self.geometry)} geometries, {len(self.pairs)} pairs, "
                f"K={self.max_contacts})")


def _environment(model, environment):
    if environment is None:
        environment = model.environment
    if environment is None:
        return Environment()
    if isinstance(environment, Environment):
        return environment
    if isinstance(environment, (Collision, list, tuple)):
        return Environment(environment)
    raise InputError(f"environment must be a screwdyn.Environment (or obstacles), got {type(environment).__name__}")


def hull_graph(vertices, faces) -> np.ndarray:
    """The vertex graph of a convex polytope for its support search
    (``screwdyn.algorithms.narrowphase.hull_support``), int64: the indices of its vertices of least
    and largest x, y, z (six), then for each of its ``n`` vertices where its neighbours start
    (``n + 1`` offsets), then the neighbours (the other ends of the edges of ``faces``)."""
    V = np.asarray(vertices, dtype=float)
    n = len(V)
    F = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    edges = np.concatenate([F[:, [0, 1]], F[:, [1, 2]], F[:, [2, 0]]])
    edges = np.unique(np.sort(np.concatenate([edges, edges[:, ::-1]]), axis=1), axis=0)
    both = np.concatenate([edges, edges[:, ::-1]])
    both = both[np.lexsort((both[:, 1], both[:, 0]))]
    offsets = np.searchsorted(both[:, 0], np.arange(n + 1))
    extremes = np.concatenate([[np.argmin(V[:, j]), np.argmax(V[:, j])] for j in range(3)])
    return np.concatenate([extremes, offsets, both[:, 1]]).astype(np.int64)


def _geom_table(model, records, body_of, pose_of):
    rows = np.zeros((len(records), _c.GEOM_WIDTH))
    verts, graphs = [], []
    nv = ng = 0
    for g, (c, b, T) in enumerate(zip(records, body_of, pose_of)):
        row = rows[g]
        row[_c.G_GADR] = -1
        T = np.array(T)
        if c.kind == "convex":        # the polytope about the centre of its bounding box: a tighter sphere
            V, F = (np.asarray(x) for x in c.hull())
            graph = hull_graph(V, F)
            row[_c.G_GADR] = ng
            graphs.append(graph)
            ng += len(graph)
            centre = 0.5 * (V.min(axis=0) + V.max(axis=0))
            V = V - centre
            T[:3, 3] = T[:3, :3] @ centre + T[:3, 3]
            row[_c.G_VADR], row[_c.G_VNUM] = nv, len(V)
            row[_c.G_RBOUND] = float(np.sqrt((V ** 2).sum(axis=1).max()))
            verts.append(V)
            nv += len(V)
        elif c.kind != "plane":
            row[_c.G_RBOUND] = c.bounding_radius()
        row[_c.G_ROW] = model._body_row[b] if b >= 0 else -1
        row[_c.G_KIND] = KIND_CODE[c.kind]
        row[_c.G_POSE:_c.G_POSE + 9] = T[:3, :3].reshape(9)
        row[_c.G_POSE + 9:_c.G_POSE + 12] = T[:3, 3]
        row[_c.G_SIZE:_c.G_SIZE + 3] = c.half_sizes
    vertices = np.ascontiguousarray(np.vstack(verts)) if verts else np.zeros((1, 3))
    graph = np.concatenate(graphs) if graphs else np.zeros(1, dtype=np.int64)
    return rows, vertices, graph


def _masks(a: Collision, b: Collision) -> bool:
    return bool((a.contype & b.conaffinity) or (b.contype & a.conaffinity))


def _filter_parents(model, geom_bodies):
    """The parent of each body for the self-collision filter: its nearest ancestor that has a mass
    or geometry (-1: the fixed base)."""
    carries = set(geom_bodies)
    parent = []
    for b in range(model.nbodies):
        p = int(model.parent[b])
        while p >= 0 and model.mass[p] == 0 and p not in carries:
            p = int(model.parent[p])
        parent.append(p)
    return parent


def _mix(a: Collision, b: Collision, row):
    """The contact parameters of a pair into its row (MuJoCo's ``mj_contactParam``; see the module
    docstring)."""
    if a.priority != b.priority:
        w = a if a.priority > b.priority else b
        o = b if w is a else a
        condim, solref, solimp = w.condim, np.array(w.solref), np.array(w.solimp)
        friction = w.friction if w.friction is not None else o.friction
        restitution = w.restitution if w.restitution is not None else o.restitution
    else:
        condim = max(a.condim, b.condim)
        sa, sb = a.solmix, b.solmix
        if sa >= 1e-15 and sb >= 1e-15:
            mix = sa / (sa + sb)
        elif sa < 1e-15 and sb < 1e-15:
            mix = 0.5
        else:
            mix = 0.0 if sa < 1e-15 else 1.0
        ra, rb = np.array(a.solref), np.array(b.solref)
        solref = mix * ra + (1 - mix) * rb if ra[0] > 0 and rb[0] > 0 else np.minimum(ra, rb)
        solimp = mix * np.array(a.solimp) + (1 - mix) * np.array(b.solimp)
        fa, fb = a.friction, b.friction
        friction = np.maximum(fa, fb) if fa is not None and fb is not None else (fa if fa is not None else fb)
        restitution = (max(a.restitution, b.restitution) if a.restitution is not None and b.restitution is not None
                       else a.restitution if a.restitution is not None else b.restitution)
    friction = DEFAULT_FRICTION if friction is None else friction
    row[_c.MU:_c.ROLLING + 1] = friction
    row[_c.RESTITUTION] = 0.0 if restitution is None else restitution
    row[_c.SOLREF:_c.SOLREF + 2] = solref
    row[_c.SOLIMP:_c.SOLIMP + 5] = solimp
    row[_c.MARGIN] = a.margin + b.margin
    row[_c.CONDIM] = condim
    row[_c.P_DETECT] = a.margin + b.margin + a.gap + b.gap


def collider(model: Model, environment=None, *, self_collision=False, max_contacts=None) -> Collider:
    """The :class:`Collider` of ``model`` with ``environment`` (None: ``model.environment``), made
    once and kept with the model (for the same environment object and options)."""
    key = ("collider", id(environment), bool(self_collision), max_contacts)
    found = model._derived.get(key) if isinstance(model, Model) else None
    if found is None or found[0] is not environment:
        found = model._derived[key] = (environment, Collider(model, environment, self_collision=self_collision,
                                                             max_contacts=max_contacts))
    return found[1]


def detect(model: Model, q, environment=None, *, self_collision=False, max_contacts=None) -> Contacts:
    """The contacts of ``model`` at ``q`` (``(nq,)`` or a batch ``(..., nq)``) with ``environment``
    (a :class:`~screwdyn.environment.Environment`; None: ``model.environment``, if any) and, with
    ``self_collision``, with itself; at most ``max_contacts`` per state (default: the most the
    candidate pairs can make, at most 64). See the module docstring for what collides and
    :mod:`screwdyn.algorithms.collide` for the layout of :class:`Contacts`.

    >>> import numpy as np, screwdyn
    >>> b = screwdyn.ModelBuilder("ball")
    >>> _ = b.add_body("ball", "base", "free", "free_flyer", mass=1.0, inertia=np.eye(3) * 4e-3)
    >>> from screwdyn.geometry import Collision
    >>> model = b.build().replace(collisions=(Collision("ball", "sphere", np.eye(4), (0.1,)),))
    >>> c = screwdyn.detect(model, [0, 0, 0.09, 0, 0, 0, 1], screwdyn.Environment(screwdyn.Ground()))
    >>> int(c.count), c.pos[0].round(3), c.normal[0], round(float(c.dist[0]), 6)
    (1, array([ 0.   ,  0.   , -0.005]), array([0., 0., 1.]), -0.01)
    """
    col = collider(model, environment, self_collision=self_collision, max_contacts=max_contacts)
    K = col.max_contacts
    data, count = dispatch.call(_KERNELS[col.tier], model, (q,), shape=((K, _c.WIDTH), (1,)),
                                params=(col.geoms, col.pairs, col.vertices, col.graph))
    found = count[..., 0]
    return Contacts(data, int(found) if found.ndim == 0 else found.astype(np.int64))
