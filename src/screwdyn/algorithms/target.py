"""How screwdyn's kernels are compiled and cached: the numba target they are compiled for, the
decorator every kernel module uses (:func:`njit`), and numba's cache around them.

**Entry points and the rest.** A kernel module's compiled entry points (``*_one``, ``*_batch``:
:mod:`.entry`) are the only functions Python calls. numba compiles every jitted function to machine
code of its own, then links its code into each caller's module and optimises and compiles it again
there: RNEA's kernel was optimised three times for its batch entry (the kernel, numba's gufunc, its
wrapper, the entry). Here a function that is not an entry point is *lowered only*: its LLVM IR is
kept for linking, neither optimised as a module nor compiled to machine code, and not cached; an
entry point links everything it calls and is optimised and compiled once, then cached whole. Such a
function cannot be called from Python (it has no machine code): tests call helpers from ``@numba.njit``
functions of their own.

**A portable CPU level.** numba compiles for the host's CPU model and keys its cache on it, so a
cache (a wheel, a Docker image) built on one machine recompiles on any other. screwdyn's kernels are
compiled for a portable level instead, on a target of their own (other packages' numba functions in
the same process keep numba's host target): on x86-64 machines with AVX2 and FMA, ``x86-64-v3``
(Haswell, Zen 1 and later), keyed as such in the cache; elsewhere, and with ``SCREWDYN_CPU=native``
in the environment, the host's model (:data:`CPU`). ``screwdyn compile --native`` fills the cache for
the host's model (the processes that use it need ``SCREWDYN_CPU=native`` too).

``MODE == "plain"`` (``SCREWDYN_NUMBA=plain``; forced where the installed numba lacks a piece this
module or :mod:`.internals` uses, and under ``NUMBA_DISABLE_JIT=1``, where the kernels run as Python
functions: numba-cuda's simulator, :mod:`screwdyn.gpu`) compiles with numba's own ``njit`` and its runtime, and caches
nothing: the same kernels, slower, for a numba other than the pinned one.
"""
import functools
import hashlib
import os
import platform
import sys
import warnings

import numba
from numba.core import config

TARGET = "screwdyn"   # the name of screwdyn's target in numba's target registry

__all__ = ["MODE", "FAST", "CACHED", "ATOMICS", "KERNEL", "HELPER", "INLINE", "DRIVER", "ONE", "BATCH", "njit",
           "CPU", "HAS_FMA", "is_entry", "install_cache_stamp", "cache_has", "compile_note", "say"]


def _fast_pieces():
    """The numba internals the fast mode uses (here and in :mod:`.internals`), or the error that
    says which one is missing."""
    from llvmlite import ir
    from numba.core import caching, cgutils, codegen, target_extension
    from numba.core.cpu import CPUContext, CPUTargetOptions
    from numba.core.imputils import impl_ret_borrowed
    from numba.core.registry import CPUDispatcher, CPUTarget
    from numba.np.arrayobj import populate_array
    if not hasattr(CPUTargetOptions, "_nrt") or not hasattr(caching.CacheImpl, "_locator_classes"):
        raise AttributeError("numba's CPUTargetOptions._nrt or CacheImpl._locator_classes")
    for cls, name in ((codegen.CPUCodeLibrary, "_get_module_for_linking"),
                      (codegen.CPUCodeLibrary, "_finalize_dynamic_globals"), (codegen.JITCPUCodegen, "_get_host_cpu_name"),
                      (codegen.JITCPUCodegen, "_get_host_cpu_features"), (codegen.JITCPUCodegen, "set_env")):
        if not hasattr(cls, name) and not any(name in vars(k) for k in cls.__mro__):
            raise AttributeError(f"numba's {cls.__name__}.{name}")
    return ir, caching, cgutils, codegen, target_extension, impl_ret_borrowed, populate_array, CPUContext, \
        CPUDispatcher, CPUTarget


MODE = "plain" if os.environ.get("SCREWDYN_NUMBA", "fast").lower() == "plain" else "fast"
if config.DISABLE_JIT:   # NUMBA_DISABLE_JIT=1 (numba-cuda's simulator): the kernels run as Python functions,
    MODE = "plain"       # where an @intrinsic cannot; plain mode's pieces are plain functions there
if MODE == "fast":
    try:
        (_llir, _caching, _cgutils, _codegen, _target_extension, _impl_ret_borrowed, _populate_array, _CPUContext,
         _CPUDispatcher, _CPUTarget) = _fast_pieces()
    except (ImportError, AttributeError) as e:   # pragma: no cover - a numba other than the pinned one
        warnings.warn(f"screwdyn: this numba lacks {e}; the kernels run in plain mode (slower, not cached)",
                      RuntimeWarning)
        MODE = "plain"

FAST = MODE == "fast"
CACHED = FAST                    # plain mode caches nothing (without the stamp a stale cache could compute with old code)
ATOMICS = FAST

# Decorator options. KERNEL: a kernel (a function of the states' range) and ONE, a one-state entry point:
# compiled without numba's reference-counting runtime (``_nrt``, undocumented: a compiled entry point then
# takes arrays as they are; such a function cannot allocate on the heap, its work lives on the stack),
# numpy's error model (x / 0 is inf, no exception); the GIL released by a long one-state call itself
# (internals.release_gil), by a batch in numba's parallel region. HELPER: arithmetic inlined by LLVM
# (forceinline), no Python or C wrappers (only jitted code calls it). INLINE: the few helpers that return an
# array (a view), inlined by numba (a function compiled without the runtime may only return its arguments),
# and DRIVER, a batch driver's set-up, likewise. BATCH: a batch entry point, a ``prange`` over work units.
if FAST:
    KERNEL = {"_nrt": False, "error_model": "numpy", "nogil": False}
    HELPER = dict(KERNEL, forceinline=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
else:
    KERNEL = {"error_model": "numpy", "nogil": True}
    HELPER = KERNEL
ONE = dict(KERNEL, entry=True)
BATCH = {"parallel": True, "entry": True}
INLINE = {"inline": "always"}
DRIVER = {"inline": "always"}


# ---------------------------------------------------------------------------------- the CPU level
_V3 = ("avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave")   # x86-64-v3 beyond v2
_V2 = ("cx16", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3")


def _cpu():
    """``(name, features)`` the kernels are compiled for: numba's own setting where one is made
    (``NUMBA_CPU_NAME``, ``NUMBA_CPU_FEATURES``); the host's model and features with
    ``SCREWDYN_CPU=native``; ``("x86-64-v3", "")`` on an x86-64 host that has that level's features
    (the name implies them); else the host's, as numba's own target."""
    import llvmlite.binding as llvm
    host_features = _codegen.get_host_cpu_features()
    if config.CPU_NAME:
        return config.CPU_NAME, (config.CPU_FEATURES if config.CPU_FEATURES is not None else host_features)
    choice = os.environ.get("SCREWDYN_CPU", "portable").lower()
    if choice in ("native", "host"):
        return llvm.get_host_cpu_name(), host_features
    if choice not in ("portable", "x86-64-v3", ""):
        warnings.warn(f"screwdyn: SCREWDYN_CPU={choice!r} is neither 'portable' nor 'native'; using the portable "
                      "level", RuntimeWarning)
    features = llvm.get_host_cpu_features()
    if platform.machine().lower() in ("x86_64", "amd64") and all(features.get(f, False) for f in _V2 + _V3):
        return "x86-64-v3", ""
    return llvm.get_host_cpu_name(), host_features


if FAST:
    CPU = _cpu()
    # whether the code compiled for CPU fuses multiply-adds: x86-64-v3 has FMA; a host model, its features
    HAS_FMA = (CPU[0] == "x86-64-v3" or "+fma" in CPU[1].split(",")
               or platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686", "x86"))
else:
    CPU = (None, None)
    HAS_FMA = False


# ---------------------------------------------------------------------------------- the target
_ENTRIES = set()   # qualified names of the entry points: their libraries are compiled to machine code


def is_entry(dispatcher) -> bool:
    """Whether ``dispatcher`` is an entry point (compiled to machine code and cached)."""
    return getattr(dispatcher, "_screwdyn_entry", False)


if FAST:
    class _Library(_codegen.JITCodeLibrary):
        """A code library of screwdyn's target: an entry point's is finalised as numba's (everything it
        links optimised together, compiled, cacheable); any other function's is lowered only."""

        def finalize(self):
            if self.name in _ENTRIES:
                return super().finalize()
            _codegen.require_global_compiler_lock()
            self._raise_if_finalized()
            seen = set()
            for library in self._linking_libraries:   # as numba's finalize, without optimising or compiling
                if library not in seen:
                    seen.add(library)
                    self._reload_init.update(library._reload_init)
                    self._final_module.link_in(library._get_module_for_linking(), preserve=True)
            self._finalize_dynamic_globals()
            self._finalized = True

    class _Codegen(_codegen.JITCPUCodegen):
        """numba's JIT code generator for the level :data:`CPU`, with :class:`_Library`."""
        _library_class = _Library

        def _get_host_cpu_name(self):
            return CPU[0]

        def _get_host_cpu_features(self):
            return CPU[1]

        def set_env(self, env_name, env):
            if self._engine.get_global_value_address(env_name):   # (0 for a function lowered only)
                super().set_env(env_name, env)

    class _Context(_CPUContext):
        def init(self):
            super().init()
            self._internal_codegen = _Codegen("screwdyn.exec")

    class _Target(_CPUTarget):
        """numba's CPU target descriptor with :class:`_Context` and a typing context of its own (numba
        caches an ``@overload``'s implementation per typing context: one shared with numba's target
        would hand this target an implementation lowered in the other's context)."""

        @functools.cached_property
        def _toplevel_target_context(self):
            return _Context(self.typing_context, self._target_name)

    class ScrewdynCPU(_target_extension.CPU):
        """The target of screwdyn's kernels in numba's target registry: a CPU, so numba's CPU
        overloads serve it."""

    class Dispatcher(_CPUDispatcher):
        """numba's CPU dispatcher on screwdyn's target. It compiles with the target named as numba's
        current one: numba types some calls outside any function's frame (a parallel loop's set-up),
        and would compile their ``@overload``s for its own target otherwise."""
        targetdescr = _Target(TARGET)
        _screwdyn_entry = False

        def compile(self, sig):
            with _target_extension.target_override(TARGET):
                return super().compile(sig)

        def add_overload(self, cres):
            """numba's, but a function lowered only is not made callable from Python (it has no machine
            code)."""
            if self._screwdyn_entry:
                super().add_overload(cres)
            else:
                self.overloads[tuple(cres.signature.args)] = cres

        def _compile_for_args(self, *args, **kws):
            """What numba's dispatcher calls a Python call with (it calls what this returns): a
            function lowered only runs its Python code (a helper called from Python, as
            ``Entry.work_floats`` does through ``per_lane``)."""
            if not self._screwdyn_entry:
                return self.py_func
            return super()._compile_for_args(*args, **kws)

    def _overload_jit(*args, **kwargs):
        """The ``jit`` numba compiles an ``@overload``'s implementation with when a kernel calls it."""
        return numba.jit(*args, _target=TARGET, **kwargs)

    _target_extension.target_registry[TARGET] = ScrewdynCPU
    _target_extension.dispatcher_registry[ScrewdynCPU] = Dispatcher
    _target_extension.jit_registry[ScrewdynCPU] = _overload_jit


def njit(function=None, *, entry=False, cache=None, **options):
    """numba's ``njit`` for screwdyn's kernels: on screwdyn's target (above), an entry point
    (``entry=True``: :data:`ONE`, :data:`BATCH`) compiled to machine code and cached (``cache=False``:
    not cached), any other function lowered only. ``options``: numba's (``KERNEL``, ``HELPER``, ...).
    Plain mode: numba's ``njit``, uncached. A function of numba's own target cannot call a function
    of this one: code outside the kernels (tests) that calls helpers uses this ``njit`` with
    ``entry=True, cache=False``."""
    def decorate(func):
        if not FAST or config.DISABLE_JIT:
            return numba.njit(**options)(func)
        dispatcher = Dispatcher(py_func=func, locals={}, targetoptions=dict(options, nopython=True))
        dispatcher._screwdyn_entry = entry   # (read by add_overload: set before any compile)
        if entry:
            _ENTRIES.add(func.__qualname__)
            if CACHED and cache is not False:
                dispatcher.enable_caching()
        return dispatcher
    return decorate if function is None else decorate(function)


# ---------------------------------------------------------------------------------- the cache
def _sources_digest(folder) -> bytes:
    h = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read())
    return h.digest()


def install_cache_stamp(folder):
    """Extend numba's cache stamp of every kernel defined in ``folder`` with a hash of all the
    folder's sources (call it before any kernel is decorated): numba stamps a cached function with its
    own file only, and an edit of a shared file (``joints.py``) would leave stale machine code. Other
    packages' caches are untouched. Nothing to do in plain mode, which does not cache."""
    if not FAST:
        return
    impl = _caching.CacheImpl
    if any(getattr(c, "_screwdyn_stamp", False) for c in impl._locator_classes):
        return
    folder = os.path.abspath(folder)
    digest = _sources_digest(folder)

    def wrap(base):
        def get_source_stamp(self):
            stamp = base.get_source_stamp(self)
            path = os.path.abspath(getattr(self, "_py_file", ""))
            return (stamp, digest) if os.path.dirname(path) == folder else stamp
        return type(base.__name__, (base,), {"get_source_stamp": get_source_stamp, "_screwdyn_stamp": True,
                                             "__module__": base.__module__})

    impl._locator_classes = [wrap(c) for c in impl._locator_classes]


def cache_has(dispatcher, signature) -> bool:
    """Whether numba's cache holds ``dispatcher`` compiled for ``signature`` (a tuple of types) for
    this machine: the index entry, read without loading the code."""
    if not FAST:
        return False
    cache = dispatcher._cache
    try:
        key = cache._index_key(signature, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:   # noqa: BLE001 - an unreadable index is a miss
        return False


@functools.lru_cache(maxsize=None)
def compile_note() -> str:
    """Where the cache lives and what it is compiled for, for the message that says a first call
    compiles."""
    if not FAST:
        return "plain mode: nothing is cached"
    where = config.CACHE_DIR or "the package's __pycache__ folders (or ~/.cache/numba when read-only)"
    return f"for {CPU[0]}, cached in {where}"


def say(message):
    """One line on stderr (what the user of a first call should know)."""
    print(f"screwdyn: {message}", file=sys.stderr, flush=True)
