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
=============  =====  ==============================================================

Model row ``n``: columns 0:3 hold gravity ``g`` (the base accelerates by ``-g``).
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
WIDTH = 30

GRAVITY = 0

REVOLUTE = 0
PRISMATIC = 1
