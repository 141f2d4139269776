"""Constraints on a kinematic tree: contacts, closed loops and joint couplings (docs/theory.md §15).

Every constraint is an immutable value holding indices and placements of one model (never the
model itself), so that a :class:`~screwdyn.model.Model` can carry the constraints of its file
(``model.constraints``: MJCF ``<equality>``, SDF loop joints, URDF mimic joints) and a call can
pass contacts of its own. Each kind gives ``size`` rows of the constraint Jacobian ``J`` and of the
force ``lam``:

===============================================  =====  =======================================================
class                                            rows   holds
===============================================  =====  =======================================================
``PointContact(model, frame, offset)``           3      the point ``offset`` of ``frame`` at zero acceleration
``FrameContact(model, frame)``                   6      ``frame`` at zero spatial acceleration
``PointLoop(model, frame_a, frame_b, ...)``      3      a point of ``frame_a`` and one of ``frame_b`` together
``FrameLoop(model, frame_a, frame_b, T_a_b)``    6      ``frame_b`` at ``T_a_b`` in ``frame_a``
``JointCoupling(model, coefficients, offset)``   1      ``sum_j k_j q_j = offset``
===============================================  =====  =======================================================

``reference="local"`` (default) writes a constraint's rows, and its force, in the axes of its
frame (``frame_a``'s, at the constrained point: Pinocchio's ``LOCAL``); ``"world"`` in the world's
axes at the same point (Pinocchio's ``LOCAL_WORLD_ALIGNED``). A 6-row block is ``(angular,
linear)``: a moment then a force, as every spatial vector of screwdyn (Pinocchio orders its
forces ``(linear, angular)``). ``lam`` is what the constraint exerts on body ``a`` (on body ``b``
the opposite, at its own point): ``M qdd + h = tau + J^T lam`` (the sign of Pinocchio's
``lambda_c``).

``baumgarte=(Kp, Kd)`` adds the corrector ``J qdd + gamma = -Kd J qd - Kp e`` (Pinocchio's
``corrector``; ``e`` the position error, §15.3) that pulls a drifting constraint back; both zero
by default. A contact's position error is measured from ``anchor`` (a world point for a
:class:`PointContact`, a world pose for a :class:`FrameContact`), which ``Kp > 0`` needs; a contact
without one has no position error (``e = 0``).

The kernels read a set of constraints packed as :mod:`screwdyn.algorithms.constraint_layout`
describes (:func:`pack`); :mod:`screwdyn.algorithms.constraint_kinds` is the only code that
branches on the kind.
"""
from __future__ import annotations

import numpy as np

from .algorithms.constraint_layout import (
    CANCHORED, CBODY_A, CBODY_B, CKD, CKIND, CKP, CNTERMS, COFFSET, CPOSE_A, CPOSE_B, CREF, CROW, CSIZE, CTERMS, CWIDTH,
    FRAME, JOINT, LOCAL, POINT, WORLD,
)
from .errors import InputError, ModelError

__all__ = ["Constraint", "PointContact", "FrameContact", "PointLoop", "FrameLoop", "JointCoupling", "pack",
           "constraint_set"]

_REFERENCES = {"local": "local", "world": "world", "world_aligned": "world", "local_world_aligned": "world"}
_KIND_CODE = {"point": POINT, "frame": FRAME, "joint": JOINT}
_ONE_DOF = (0, 1)   # model.joint_type of revolute and prismatic joints


def _model_key(model):
    """What a constraint must agree on with the model it is used with: the tree, its q and v
    layouts and its frames (a model with other inertias, gravity or limits takes the same
    constraints)."""
    key = model._derived.get("constraint_key")
    if key is None:
        key = model._derived["constraint_key"] = hash((model.nq, model.nv, tuple(model.parent.tolist()),
                                                       tuple(model.joint_type.tolist()), model.frame_names,
                                                       tuple(model.frame_body.tolist())))
    return key


def _check_model(model, who):
    from .model import Model   # (a constraint is made from a model; model.py never imports this module)
    if not isinstance(model, Model):
        raise InputError(f"{who}: model must be a screwdyn.Model, got {type(model).__name__}")


def _frame(model, frame, who, what="frame"):
    """``(frame index, body, T_body_frame)`` of a frame name or index."""
    try:
        k = model.frame_index(frame)
    except ModelError as e:
        raise ModelError(f"{who}: {what}: {e}") from None
    return k, int(model.frame_body[k]), np.array(model.frame_pose[k])


def _vector3(x, who, what):
    try:
        a = np.array(x, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{who}: {what} must be 3 numbers, got {x!r}") from None
    if a.shape != (3,):
        raise InputError(f"{who}: {what} must have shape (3,), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise InputError(f"{who}: {what} has a NaN or inf entry: {a}")
    return a


def _pose(T, who, what):
    """A rigid transform ``(4, 4)``: finite, rotation orthonormal with determinant 1, last row 0 0 0 1."""
    try:
        a = np.array(T, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{who}: {what} must be a 4x4 homogeneous transform, got {T!r}") from None
    if a.shape != (4, 4):
        raise InputError(f"{who}: {what} must have shape (4, 4), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise InputError(f"{who}: {what} has a NaN or inf entry")
    R = a[:3, :3]
    if (not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0
            or not np.allclose(a[3], (0.0, 0.0, 0.0, 1.0))):
        raise InputError(f"{who}: {what} is not a rigid transform (its rotation is not orthonormal with "
                         "determinant 1, or its last row is not 0 0 0 1)")
    return a


def _translation(p):
    T = np.eye(4)
    T[:3, 3] = p
    return T


class Constraint:
    """What every constraint has (see the module docstring): ``kind`` (``"point"``, ``"frame"``
    or ``"joint"``), ``size`` (its rows), ``reference`` (``"local"`` or ``"world"``), the
    Baumgarte gains ``Kp``, ``Kd``, a ``name`` for messages, and for the point and frame kinds the
    bodies ``body_a``, ``body_b`` (model body indices, -1 the fixed base) and the poses
    ``pose_a = T_{a, ca}``, ``pose_b = T_{b, cb}`` of the constraint's frames on them (``(4, 4)``
    read-only; ``b = -1``: the anchor in the world). Immutable; compared by identity."""

    kind = ""
    size = 0

    def __init__(self, model, who, reference, baumgarte, name):
        _check_model(model, who)
        try:
            self.__dict__["reference"] = _REFERENCES[reference]
        except (KeyError, TypeError):
            raise InputError(f"{who}: reference must be 'local' or 'world' (Pinocchio's LOCAL and "
                             f"LOCAL_WORLD_ALIGNED), got {reference!r}") from None
        try:
            Kp, Kd = (float(x) for x in baumgarte)
        except (TypeError, ValueError):
            raise InputError(f"{who}: baumgarte must be a pair (Kp, Kd) of numbers, got {baumgarte!r}") from None
        for what, g in (("Kp", Kp), ("Kd", Kd)):
            if not (np.isfinite(g) and g >= 0.0):
                raise InputError(f"{who}: Baumgarte gain {what} must be a finite number >= 0, got {g}")
        self.__dict__.update(Kp=Kp, Kd=Kd, name=str(name) if name is not None else who,
                             _key=_model_key(model), body_a=-1, body_b=-1, pose_a=None, pose_b=None)

    def __setattr__(self, key, value):
        raise AttributeError(f"{type(self).__name__} is immutable (make a new one)")

    def __delattr__(self, key):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __setstate__(self, state):   # (a pickle's arrays come back writable)
        self.__dict__.update(state)
        for value in state.values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r}, rows={self.size}, reference={self.reference!r})"

    def _freeze(self, **arrays):
        for key, value in arrays.items():
            value = np.array(value, dtype=float)
            value.setflags(write=False)
            self.__dict__[key] = value

    def compatible(self, model) -> bool:
        """Whether the constraint can be used with ``model``: one of the same tree, ``q`` and ``v``
        layouts and frames as the model it was made from."""
        return _model_key(model) == self._key

    def _row(self, model, row):
        """The constraint's packed row (:mod:`screwdyn.algorithms.constraint_layout`) for ``model``,
        its rows starting at ``row`` of ``lam``; and its terms (a JOINT row's, else empty)."""
        r = np.zeros(CWIDTH)
        r[CKIND] = _KIND_CODE[self.kind]
        r[CREF] = LOCAL if self.reference == "local" else WORLD
        body_rows = model._body_row
        r[CBODY_A] = body_rows[self.body_a] if self.body_a >= 0 else -1
        r[CBODY_B] = body_rows[self.body_b] if self.body_b >= 0 else -1
        for col, T in ((CPOSE_A, self.pose_a), (CPOSE_B, self.pose_b)):
            T = np.eye(4) if T is None else T
            r[col:col + 9] = T[:3, :3].reshape(9)
            r[col + 9:col + 12] = T[:3, 3]
        r[CKP], r[CKD], r[CROW], r[CSIZE] = self.Kp, self.Kd, row, self.size
        r[CANCHORED] = 1.0 if getattr(self, "anchored", True) else 0.0
        return r, np.zeros(0)


class _TwoFrames(Constraint):
    def _set_frames(self, model, who, a, b, pose_a, pose_b):
        (ka, body_a, _), (kb, body_b, _) = a, b
        if body_a < 0 and body_b < 0:
            raise ModelError(f"{who}: both ends ({model.frame_names[ka]!r}, {model.frame_names[kb]!r}) are on the "
                             "fixed base: nothing the constraint holds can move")
        if body_a == body_b:
            raise ModelError(f"{who}: both ends ({model.frame_names[ka]!r}, {model.frame_names[kb]!r}) are on the "
                             f"same body {model.link_names[body_a]!r}: they cannot move apart")
        self.__dict__.update(body_a=body_a, body_b=body_b, frame_a=model.frame_names[ka],
                             frame_b=model.frame_names[kb])
        self._freeze(pose_a=pose_a, pose_b=pose_b)


class _Contact(Constraint):
    def _set_contact(self, model, who, frame, pose_a, anchor_pose):
        k, body, _ = frame
        if body < 0:
            raise ModelError(f"{who}: frame {model.frame_names[k]!r} is on the fixed base: it cannot move, so it "
                             "cannot be in contact")
        self.__dict__.update(body_a=body, body_b=-1, frame_a=model.frame_names[k], frame_b=None)
        self._freeze(pose_a=pose_a, pose_b=anchor_pose)


class PointContact(_Contact):
    """A point of a frame held at zero acceleration in the world, 3 rows (a foot on the ground, a
    fingertip on a wall; Pinocchio's ``CONTACT_3D`` with the world).

    ``frame``: a frame name (or index) of ``model``; ``offset``: the point in that frame [m].
    ``reference``: ``"local"`` (the force in the frame's axes) or ``"world"`` (world axes).
    ``anchor``: the world point the contact point is held at (its position error, ``e = p - anchor``
    in the reference's axes, is corrected when ``Kp > 0`` and by a simulation's projection; without
    an anchor ``e = 0``: only the point's acceleration, and velocity, are held). ``baumgarte``:
    ``(Kp, Kd)``.

    >>> import screwdyn
    >>> solo = screwdyn.models.load("solo12")
    >>> PointContact(solo, "FL_FOOT")
    PointContact('FL_FOOT', rows=3, reference='local')
    """

    kind, size = "point", 3

    def __init__(self, model, frame, offset=(0.0, 0.0, 0.0), *, reference="local", baumgarte=(0.0, 0.0),
                 anchor=None, name=None):
        who = "PointContact"
        super().__init__(model, who, reference, baumgarte, name if name is not None else str(frame))
        f = _frame(model, frame, who)
        offset = _vector3(offset, who, "offset")
        if anchor is None and self.Kp > 0:
            raise InputError(f"{who}: Kp > 0 corrects the position error from an anchor: give anchor (a world point)")
        self.__dict__["anchored"] = anchor is not None
        anchor = np.zeros(3) if anchor is None else _vector3(anchor, who, "anchor")
        self._set_contact(model, who, f, f[2] @ _translation(offset), _translation(anchor))
        self._freeze(offset=offset, anchor=anchor)


class FrameContact(_Contact):
    """A frame held at zero spatial acceleration, 6 rows ``(angular, linear)`` (a foot sole flat on
    the ground, a welded end effector; Pinocchio's ``CONTACT_6D`` with the world).

    ``anchor``: the world pose ``(4, 4)`` the frame is held at (position error ``e = log(T_anchor^-1
    T_frame)``, corrected when ``Kp > 0`` and by a simulation's projection; ``e = 0`` without an
    anchor). Other arguments as :class:`PointContact`.
    """

    kind, size = "frame", 6

    def __init__(self, model, frame, *, reference="local", baumgarte=(0.0, 0.0), anchor=None, name=None):
        who = "FrameContact"
        super().__init__(model, who, reference, baumgarte, name if name is not None else str(frame))
        f = _frame(model, frame, who)
        if anchor is None and self.Kp > 0:
            raise InputError(f"{who}: Kp > 0 corrects the pose error from an anchor: give anchor (a world pose)")
        self.__dict__["anchored"] = anchor is not None
        anchor = np.eye(4) if anchor is None else _pose(anchor, who, "anchor")
        self._set_contact(model, who, f, f[2], anchor)
        self._freeze(anchor=anchor)


class PointLoop(_TwoFrames):
    """Two points, one on each of two bodies, held together, 3 rows (MJCF ``<equality connect>``,
    SDF loop joints, Cassie's rods; Pinocchio's ``CONTACT_3D`` between two joints).

    ``offset_a``, ``offset_b``: the points in ``frame_a`` and ``frame_b`` [m]. The rows (and the
    force on ``frame_a``'s body) are in ``frame_a``'s axes (``"local"``) or the world's; the
    position error is ``e = p_a - p_b`` in those axes. Either frame may be on the fixed base, not
    both.
    """

    kind, size = "point", 3

    def __init__(self, model, frame_a, frame_b, offset_a=(0.0, 0.0, 0.0), offset_b=(0.0, 0.0, 0.0), *,
                 reference="local", baumgarte=(0.0, 0.0), name=None):
        who = "PointLoop"
        super().__init__(model, who, reference, baumgarte, name if name is not None else f"{frame_a}-{frame_b}")
        a, b = _frame(model, frame_a, who, "frame_a"), _frame(model, frame_b, who, "frame_b")
        offset_a, offset_b = _vector3(offset_a, who, "offset_a"), _vector3(offset_b, who, "offset_b")
        self._set_frames(model, who, a, b, a[2] @ _translation(offset_a), b[2] @ _translation(offset_b))
        self._freeze(offset_a=offset_a, offset_b=offset_b)


class FrameLoop(_TwoFrames):
    """``frame_b`` held at the pose ``T_a_b`` in ``frame_a`` (the identity by default: the frames
    coincide), 6 rows ``(angular, linear)`` (MJCF ``<equality weld>`` with its ``relpose``;
    Pinocchio's ``CONTACT_6D`` between two joints). The constraint frame is ``frame_a`` moved by
    ``T_a_b``, where ``frame_b`` is to be; rows, force and the pose error ``e = log(T_b^-1 T_c)``
    are in its axes (``"local"``) or the world's at its origin.
    """

    kind, size = "frame", 6

    def __init__(self, model, frame_a, frame_b, T_a_b=None, *, reference="local", baumgarte=(0.0, 0.0), name=None):
        who = "FrameLoop"
        super().__init__(model, who, reference, baumgarte, name if name is not None else f"{frame_a}-{frame_b}")
        a, b = _frame(model, frame_a, who, "frame_a"), _frame(model, frame_b, who, "frame_b")
        T_a_b = np.eye(4) if T_a_b is None else _pose(T_a_b, who, "T_a_b")
        self._set_frames(model, who, a, b, a[2] @ T_a_b, b[2])
        self._freeze(T_a_b=T_a_b)


class JointCoupling(Constraint):
    """``sum_j k_j q_j = offset``, 1 row (MJCF ``<equality joint>`` of degree one and fixed-tendon
    equalities, URDF ``<mimic>``: ``q_f - m q_l = o`` is ``{follower: 1, leader: -m}``, offset ``o``).

    ``coefficients``: a dict ``{joint name: k_j}`` or an array over ``q`` (``(nq,)``), nonzero only
    on revolute and prismatic joints. ``offset`` [rad or m]. The row of ``J`` is ``k`` over the
    joints' velocities; ``lam`` is a generalized force (N m or N per unit of ``k``); the position
    error is ``e = sum_j k_j q_j - offset``. ``reference`` does not apply.
    """

    kind, size = "joint", 1

    def __init__(self, model, coefficients, offset=0.0, *, baumgarte=(0.0, 0.0), name=None):
        who = "JointCoupling"
        super().__init__(model, who, "local", baumgarte, name if name is not None else who)
        k = np.zeros(model.nq)
        if isinstance(coefficients, dict):
            for joint, c in coefficients.items():
                try:
                    j = model.joint_index(joint)
                except ModelError as e:
                    raise ModelError(f"{who}: {e}") from None
                if model.joint_type[j] not in _ONE_DOF:
                    raise ModelError(f"{who}: joint {joint!r} is not revolute or prismatic: a coupling is "
                                     "between joints of one coordinate")
                try:
                    k[model.idx_qs[j]] = float(c)
                except (TypeError, ValueError):
                    raise InputError(f"{who}: the coefficient of joint {joint!r} must be a number, got {c!r}") from None
        else:
            try:
                a = np.array(coefficients, dtype=float)
            except (TypeError, ValueError):
                raise InputError(f"{who}: coefficients must be a dict {{joint: k}} or an array over q") from None
            if a.shape != (model.nq,):
                raise InputError(f"{who}: coefficients as an array must have shape ({model.nq},) (one per entry of "
                                 f"q), got shape {a.shape}")
            k = a
            for j in np.flatnonzero(~np.isin(model.joint_type, _ONE_DOF)):
                block = k[model.idx_qs[j]:model.idx_qs[j] + model.nqs[j]]
                if np.any(block != 0):
                    raise ModelError(f"{who}: joint {model.joint_names[j]!r} is not revolute or prismatic: its "
                                     "entries of q cannot be coupled")
        if not np.all(np.isfinite(k)):
            raise InputError(f"{who}: a coefficient is NaN or inf")
        if not np.any(k != 0):
            raise InputError(f"{who}: every coefficient is zero: the constraint holds nothing")
        try:
            offset = float(offset)
        except (TypeError, ValueError):
            raise InputError(f"{who}: offset must be a number, got {offset!r}") from None
        if not np.isfinite(offset):
            raise InputError(f"{who}: offset is NaN or inf")
        qi = np.flatnonzero(k)
        dof_of_q = np.full(model.nq, -1)
        for j in range(model.nbodies):
            if model.joint_type[j] in _ONE_DOF:
                dof_of_q[model.idx_qs[j]] = model.idx_vs[j]
        self.__dict__.update(offset=offset, joints=tuple(model.joint_names[int(np.searchsorted(model.idx_qs, i,
                                                                                               side="right")) - 1]
                                                         for i in qi))
        self._freeze(coefficients=k, _terms=np.column_stack([qi, dof_of_q[qi], k[qi]]).reshape(-1))

    def _row(self, model, row):
        r, _ = super()._row(model, row)
        r[CBODY_A] = r[CBODY_B] = -1
        r[COFFSET], r[CNTERMS] = self.offset, len(self._terms) // 3
        return r, self._terms


def _checked(model, constraints):
    """``model.constraints`` followed by ``constraints`` as one tuple, each checked to be a
    constraint made for a model of this one's structure."""
    if isinstance(constraints, Constraint):
        constraints = (constraints,)
    try:
        given = tuple(constraints)
    except TypeError:
        raise InputError(f"constraints must be a sequence of screwdyn constraints, got "
                         f"{type(constraints).__name__}") from None
    for k, c in enumerate(given):
        if not isinstance(c, Constraint):
            raise InputError(f"constraints[{k}] is a {type(c).__name__}, not a screwdyn constraint (PointContact, "
                             "FrameContact, PointLoop, FrameLoop, JointCoupling)")
        if not c.compatible(model):
            raise InputError(f"constraints[{k}] ({c!r}) was made for another model than {model.name!r}: make it "
                             "from this model")
    return tuple(model.constraints) + given


_PACKED = 8   # packed sets kept per model (a caller alternating between a few contact sets packs each once)


def pack(model, constraints):
    """The packed array ``cd (nc, width)`` of :mod:`screwdyn.algorithms.constraint_layout` for
    ``model.constraints`` followed by ``constraints``, and the total number of rows ``m``. The
    last few sets packed for a model are kept (keyed by the constraints' identities)."""
    key = ("constraints",) + (constraints if type(constraints) is tuple else ())
    cache = model._derived.setdefault("packed_constraints", {})
    found = cache.get(key)
    if found is not None:
        return found
    every = _checked(model, constraints)
    rows, terms, m = [], [], 0
    for c in every:
        r, t = c._row(model, m)
        rows.append(r)
        terms.append(t)
        m += c.size
    width = CWIDTH + max([len(t) for t in terms] + [0])
    cd = np.zeros((len(every), width))
    for k, (r, t) in enumerate(zip(rows, terms)):
        cd[k, :CWIDTH] = r
        cd[k, CTERMS:CTERMS + len(t)] = t
    found = (cd, m, every)
    if type(constraints) is tuple:
        if len(cache) >= _PACKED:
            cache.pop(next(iter(cache)))
        cache[key] = found
    return found


def constraint_set(model, constraints=()):
    """``model.constraints`` followed by ``constraints`` (one constraint or a sequence), checked:
    the constraints a call of the constrained dynamics acts on, in the order of the rows of ``J``
    and ``lam``."""
    return pack(model, tuple(constraints) if not isinstance(constraints, Constraint) else (constraints,))[2]
