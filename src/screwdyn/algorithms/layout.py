"""Layout of the packed model array that every compiled kernel reads.

A :class:`~screwdyn.model.Model` is packed once, at construction, into one contiguous
``float64`` array ``kd`` of shape ``(n + 1, WIDTH)``: row ``i < n`` describes body ``i``, the
last row holds model-wide data. One array keeps the call into compiled code cheap (numba
pays per argument) and the data of one body together in cache.

Body row ``i`` (all in body ``i``'s frame, which sits on its joint axis):

=============  =====  ==============================================================
columns        name   meaning
=============  =====  ==============================================================
0:9            ROT    rotation ``R`` of ``T_{p(i), i}`` at ``q = 0`` (row-major)
9:12           POS    position ``p`` of ``T_{p(i), i}`` at ``q = 0``
12:15          AXIS   unit joint axis ``a``
15             JTYPE  joint type: 0 revolute, 1 prismatic
16             PARENT parent body ``p(i) < i``; -1 is the fixed base
17             MASS   mass ``m``
18:21          MCOM   first moment ``h = m c``
21:27          IORG   inertia about the frame origin ``I_o = I_c - m [c][c]``:
                      xx, xy, xz, yy, yz, zz
27             ARMAT  reflected rotor inertia ``n_r^2 I_m`` (Pinocchio's armature)
28             JSCALE joint scale ``s``: the joint turns (slides) ``s q``, ``S_i = s (a, 0)``;
                      1 for every URDF joint, ``|omega|`` for a non-unit screw axis
29             AXISK  1, 2, 3 when a revolute axis is exactly x, y, z (a cheaper joint transform), else 0
30             QIDX   the row's first entry in ``q`` (its joint's ``idx_q``; -1 for an inner row)
31             POSEK  how the row's pose depends on ``q``: ONE_DOF (``exp([S_i] q_i)`` of its
                      own coordinate), FREE (position and unit quaternion, seven entries of
                      ``q``), BALL (a unit quaternion, four entries), INNER (none: the identity)
=============  =====  ==============================================================

**Rows are degrees of freedom.** A joint of several degrees of freedom (a free-flyer: 6, a spherical
joint: 3) takes that many consecutive rows, one per column of its motion subspace ``S = [e_1 ..
e_k]`` in the child frame (a free-flyer: rotations about x, y, z, then translations along x, y, z;
a spherical joint: rotations about x, y, z), each row a constant screw ``S_i`` (columns AXIS, JTYPE).
Its first row carries the joint's pose (POSEK FREE or BALL, ``QIDX`` where its ``q`` block
starts); the others are INNER rows at the identity pose in the one before, and the last carries
the body's inertia (the others are massless). The twist of every row of such a joint is the whole
joint's, ``V = [Ad] V_p + S qd_block`` (:func:`.joints.joint_velocities`): then each algorithm's
one-degree-of-freedom step per row is exact for the joint (docs/theory.md §4.5).

Model row ``n``: columns 0:3 hold gravity ``g`` (the base accelerates by ``-g``); column NQ the
length of ``q``.
"""

ROT = 0
POS = 9
AXIS = 12
JTYPE = 15
PARENT = 16
MASS = 17
MCOM = 18
IORG = 21
ARMAT = 27
JSCALE = 28
AXISK = 29
QIDX = 30
POSEK = 31
WIDTH = 32

GRAVITY = 0
NQ = 3

# POSEK: how a row's pose depends on q
ONE_DOF = 0
FREE = 1
BALL = 2
INNER = 3

REVOLUTE = 0
PRISMATIC = 1
