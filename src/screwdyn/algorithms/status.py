"""What a kernel reports, state by state: the status codes shared by the kernels and
:mod:`screwdyn.dispatch`, which turns them into exceptions."""
import enum


class Status(enum.IntEnum):
    """``status[k]`` of state ``k`` (0: computed), or what a compiled entry point returns."""
    OK = 0
    NONFINITE = 1        # NaN or inf in the first state input; NONFINITE + a for input a (q, qd, qdd / tau)
    NONFINITE_FEXT = 4   # NaN or inf in the external wrenches
    SINGULAR = 5         # a pivot of the mass matrix (ABA's D_i, a diagonal of L^T D L) is not positive
    OVERFLOW = 6         # finite inputs whose result is not finite (it overflows float64)
    NO_BLAS = 7          # scipy's BLAS could not be loaded (internals.gemm)
    NOT_FAST = 9         # arrays not laid out as the entry point indexes them: the caller takes the general path
