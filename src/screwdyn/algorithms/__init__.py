"""The compiled kernels (numba): one algorithm per file, its equations above the code.

=================  ==========================================================================
module             contents
=================  ==========================================================================
``rnea``           inverse dynamics (RNEA)
``crba``           the mass matrix (CRBA)
``aba``            forward dynamics (ABA)
``coriolis``       the Coriolis matrix of the Christoffel symbols
``rnea_derivatives``  the analytic derivatives of inverse dynamics, ``dtau/dq``, ``dtau/dqd``, ``M``
``aba_derivatives``   the derivatives of forward dynamics, ``-M^-1 dtau/dq``, ``-M^-1 dtau/dqd``, ``M^-1``
``ltdl``           ``M = L^T D L``: forward dynamics by CRBA and the inverse mass matrix
``energy``         energies, centre of mass, momentum
``kinematics``     poses, Jacobians, ``Jdot qd``
``regressor``      the joint-torque regressor ``Y`` with ``tau = Y pi``
``constrained``    constrained dynamics: the constraint Jacobian and drift, the Delassus matrix,
                   forward dynamics under constraints and impulses
``kkt``            the sparse KKT factorization and the proximal solve of constrained dynamics
``constraint_kinds``  the constraint interface (the only code that branches on the constraint kind)
``constraint_layout`` the packed constraint array the constrained kernels read
``joints``         the joint interface (the only code that branches on the joint type)
``spatial_kernels`` / ``inertia_kernels``   spatial algebra and inertias in plain numbers
``layout``         the packed model array the kernels read
``work``           lanes, work arrays, status, scheduling: what every kernel does around its arithmetic
``status``         the status codes
``internals``      what is taken from numba beyond its documented API, with a plain fallback
``entry``          each kernel's compiled entry points and their contract, for ``screwdyn.dispatch``
=================  ==========================================================================

Each algorithm's arithmetic is written once, as a kernel over a range of states (:mod:`.work`):
a single state and a batch run the same compiled code.
"""
import os

from .target import install_cache_stamp

install_cache_stamp(os.path.dirname(os.path.abspath(__file__)))   # before any kernel is decorated
