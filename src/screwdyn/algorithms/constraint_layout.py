"""Layout of the packed constraint array that the constrained-dynamics kernels read.

A set of constraints (:mod:`screwdyn.constraints`: the model's own ``model.constraints`` followed
by those a call passes) is packed into one ``float64`` array ``cd`` of shape ``(nc, width)``, one
row per constraint, as :mod:`.layout` packs the model into ``kd``. The kernels never see the
constraint objects; :mod:`.constraint_kinds` is the only code that reads a row's kind.

Row ``c`` (a constraint between the frame ``ca`` carried by body ``a`` and the frame ``cb``
carried by body ``b``; body ``-1`` is the fixed base, whose "frame" ``cb`` is then a pose in the
world)::

=============  ========  ===================================================================
columns        name      meaning
=============  ========  ===================================================================
0              CKIND     POINT (3 rows: the points ``p_a``, ``p_b`` move together), FRAME (6
                         rows: the frames move together), JOINT (1 row: ``sum_j k_j q_j = offset``)
1              CREF      LOCAL (rows in the axes of ``ca``) or WORLD (in the world's axes, at ``ca``)
2              CBODY_A   kernel row (:mod:`.layout`) of body ``a``: the last row of its joint
3              CBODY_B   kernel row of body ``b``, -1 for the fixed base
4:16           CPOSE_A   ``T_{a, ca}``, twelve numbers: ``R`` row-major, then ``p``
16:28          CPOSE_B   ``T_{b, cb}`` (``b = -1``: ``T_{0, cb}``, the anchor in the world)
28             CKP       Baumgarte gain ``Kp`` [1/s^2]
29             CKD       Baumgarte gain ``Kd`` [1/s]
30             CROW      the constraint's first row in ``lam`` (and in ``J``)
31             CSIZE     its number of rows: 3, 6 or 1
32             COFFSET   JOINT: the offset of ``sum_j k_j q_j = offset``
33             CNTERMS   JOINT: the number of terms ``t``
34             CANCHORED 1 when the position error ``e`` is measured (a loop, a coupling, a contact
                         given an anchor), 0 for a contact without anchor (``e = 0``)
35:35+3t       CTERMS    JOINT: ``(index in q, index in qd, k_j)`` of each term
=============  ========  ===================================================================

``width`` is ``35 + 3 t_max`` (``t_max`` the most terms of a JOINT row of the set), at least 35:
a run-time size, so one compiled kernel takes every set.
"""

CKIND = 0
CREF = 1
CBODY_A = 2
CBODY_B = 3
CPOSE_A = 4
CPOSE_B = 16
CKP = 28
CKD = 29
CROW = 30
CSIZE = 31
COFFSET = 32
CNTERMS = 33
CANCHORED = 34
CTERMS = 35
CWIDTH = 35

# CKIND
POINT = 0
FRAME = 1
JOINT = 2

# CREF
LOCAL = 0
WORLD = 1
