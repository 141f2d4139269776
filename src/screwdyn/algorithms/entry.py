"""Each kernel's compiled entry points and their contract, declared in the kernel's module
(:data:`ENTRIES` there) and read by :mod:`screwdyn.dispatch`, which calls them.

Every algorithm has two entry points, with arguments in one order:

* ``*_one(kd, *states, [fext, use_fext], *params, *outputs) -> status``: one state, vectors ``(n,)``
  of any stride; returns its :class:`.status.Status`, or ``NOT_FAST`` for arrays it does not take.
* ``*_batch(kd, *states, [fext, use_fext], *params, *outputs, status, [lanes])``: a batch, states in
  rows ``(B, n)``, outputs ``(B, ...)``, ``status (B,)``; returns 0, or ``NOT_FAST`` with nothing
  computed. ``lanes`` (the kernels run that many states side by side) is a compile-time constant:
  numba compiles the entry for the value in its signature, :data:`LANES` of the module or 1.

Their signatures follow from the declaration: ``kd`` and the states float64 arrays, ``fext`` a
C-contiguous ``(n, 6)`` (one state) or ``(B, n, 6)`` array with a flag, ``params`` as declared,
outputs C-contiguous float64 arrays of the declared number of dimensions per state.
"""
from dataclasses import dataclass, field

from numba import types

F64 = types.float64
I64 = types.int64
BOOL = types.boolean


def array(ndim, layout="C", dtype=F64):
    return types.Array(dtype, ndim, layout)


@dataclass(eq=False)
class Entry:
    """An algorithm's entry points: what :mod:`screwdyn.dispatch` needs to call it."""
    name: str                 # what it computes, for messages
    one: object               # the single-state entry point (a numba dispatcher)
    batch: object             # the batch entry point
    states: tuple             # names of the state arguments, in order ("q", "qd", "qdd")
    outputs: tuple            # dimensions of each output for one state: (1,) for tau (n,)
    per_lane: object          # floats of stack work per lane (or per state), a numba function of n
    lanes: int = 0            # states side by side in a batch (0: one state at a time)
    fext: bool = False        # takes external wrenches
    params: tuple = ()        # numba types of the extra arguments (a frame, a reference, ...)
    compiled: dict = field(default_factory=dict, repr=False)   # filled by screwdyn.dispatch

    def signature(self, which, lanes=None):
        """The numba signature of the ``"one"`` or ``"batch"`` entry point (``lanes`` for a batch
        of a lanes kernel: the compile-time lane count)."""
        one = which == "one"
        sig = [array(2)] + [array(1, "A") if one else array(2) for _ in self.states]
        if self.fext:
            sig += [array(2 if one else 3), BOOL]
        sig += list(self.params)
        sig += [array(d if one else d + 1) for d in self.outputs]
        if not one:
            sig.append(array(1, dtype=I64))
            if self.lanes:
                sig.append(types.IntegerLiteral(lanes or self.lanes))
        return tuple(sig)

    def work_floats(self, n, lanes=1):
        """Floats of stack a call takes for ``n`` bodies with ``lanes`` lanes."""
        return lanes * getattr(self.per_lane, "py_func", self.per_lane)(n)   # (a function under NUMBA_DISABLE_JIT)
