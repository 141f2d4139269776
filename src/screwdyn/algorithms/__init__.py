"""Compiled kernels (numba). One algorithm per file; shared pieces in layout, joints,
spatial_kernels and inertia_kernels.

numba's on-disk cache (``cache=True``) stamps a kernel with the hash of its own source file
only, so a change to a shared file it inlines (``joints.py``, ``layout.py``, ...) would leave
stale machine code that silently computes with the old definitions. Before any kernel is
decorated, this module makes the stamp of every kernel in this folder also carry a hash of all
the folder's sources: any edit recompiles every kernel. Other packages' caches are untouched.
"""
import hashlib
import os
import warnings

_HERE = os.path.dirname(os.path.abspath(__file__))


def _sources_digest() -> bytes:
    h = hashlib.sha256()
    for name in sorted(os.listdir(_HERE)):
        if name.endswith(".py"):
            with open(os.path.join(_HERE, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read())
    return h.digest()


def _install_cache_stamp():
    try:
        from numba.core import caching
        impl = caching.CacheImpl
        classes = impl._locator_classes
    except (ImportError, AttributeError):  # pragma: no cover - numba internals moved
        warnings.warn("screwdyn: cannot extend numba's cache stamp; after editing a shared kernel file, "
                      "clear numba's cache by hand", RuntimeWarning)
        return
    if any(getattr(c, "_screwdyn_stamp", False) for c in classes):
        return
    digest = _sources_digest()

    def wrap(base):
        def get_source_stamp(self):
            stamp = base.get_source_stamp(self)
            path = os.path.abspath(getattr(self, "_py_file", ""))
            return (stamp, digest) if os.path.dirname(path) == _HERE else stamp
        return type(base.__name__, (base,), {"get_source_stamp": get_source_stamp, "_screwdyn_stamp": True,
                                             "__module__": base.__module__})

    impl._locator_classes = [wrap(c) for c in classes]


_install_cache_stamp()
