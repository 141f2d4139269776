"""Compiling ahead (screwdyn.precompile, algorithms/target.py): what ``pip install`` compiles, what
``screwdyn compile`` compiles, and the cache keyed to a portable CPU level, not the build host's."""
import os
import pathlib
import subprocess
import sys

import llvmlite.binding as llvm
import pytest

from screwdyn import precompile
from screwdyn.algorithms import target
from screwdyn.dispatch import kernels


def test_the_install_set_does_not_grow_unless_someone_decides_so():
    """``pip install .`` compiles these entry points and nothing else (each costs seconds of every
    user's install): a new kernel compiles on its first use unless this list is changed on purpose."""
    assert precompile.INSTALL == (
        ("rnea", "one"), ("rnea", "batch"), ("crba", "one"), ("crba", "batch"), ("aba", "one"), ("aba", "batch"),
        ("coriolis", "one"), ("coriolis", "batch"), ("jacobian", "one"), ("jacobian", "batch"),
        ("rollout", "one"), ("rollout", "batch"), ("energy", "batch"))
    names = [precompile.variant_name(*v[1:]) for v in precompile.variants("install")]
    assert len(names) == len(set(names)) == 13
    assert "rnea batch (16 lanes)" in names and "energy batch" in names and "rollout one" in names


def test_screwdyn_compile_covers_every_entry_point_and_lane_count():
    """``screwdyn compile`` fills the cache with every variant a call can choose: one state, and each
    lane count :meth:`Kernel.lanes` can pick for some model (LANES halved down to 1)."""
    every = precompile.variants("all")
    for kernel in kernels():
        mine = [(w, lanes) for _, key, w, lanes in every if key == kernel.key]
        assert ("one", None) in mine, kernel.key
        if kernel.entry.lanes:
            for n in (1, 7, 50, 102):
                lanes = kernel.lanes(n)
                assert lanes == 0 or ("batch", lanes) in mine, (kernel.key, n, lanes)
        else:
            assert ("batch", None) in mine, kernel.key
    assert every[0][0] == "contact_rollout"   # the longest module first


def test_every_entry_point_is_on_screwdyns_target():
    """Entry points are compiled to machine code and cached; every other function of the kernel
    folder is lowered only, and runs its Python code when called from Python."""
    if target.MODE != "fast":
        pytest.skip("plain mode: numba's own target")
    for kernel in kernels():
        for dispatcher in (kernel.entry.one, kernel.entry.batch):
            assert isinstance(dispatcher, target.Dispatcher) and target.is_entry(dispatcher), kernel.key
    from screwdyn.algorithms import rnea
    assert isinstance(rnea.rnea, target.Dispatcher) and not target.is_entry(rnea.rnea)
    from screwdyn.algorithms import aba_derivatives
    assert aba_derivatives.dense(28) and not aba_derivatives.dense(29)   # its Python code
    with pytest.raises(NotImplementedError, match="not usable in pure-python"):   # (an intrinsic: not in Python)
        rnea.body_wrench((2.0,) + (0.0,) * 9, (0.0,) * 6, (0.0,) * 6)


PROBE = """
from screwdyn.precompile import compile_ahead
from screwdyn.algorithms.target import CPU
print(CPU[0])
compile_ahead([("jacobian", "one"), ("poses", "one")], jobs=2)
"""


def test_the_cache_names_the_portable_level_not_the_hosts_cpu(tmp_path):
    """The cache (what a wheel or a Docker image ships) is keyed to x86-64-v3 on a machine that has
    it, not to the build host's model, so it loads on any machine of that level; numba's target for
    other packages is untouched. ``SCREWDYN_CPU=native`` compiles (and keys) for the host instead."""
    if target.MODE != "fast":
        pytest.skip("plain mode caches nothing")
    host = llvm.get_host_cpu_name()
    runs = {}
    for cpu in ("portable", "native"):
        cache = tmp_path / cpu
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), SCREWDYN_CPU=cpu)
        env.pop("NUMBA_CPU_NAME", None)
        r = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        index = b"".join(p.read_bytes() for p in pathlib.Path(cache).rglob("*.nbi"))
        assert index, "nothing cached"
        runs[cpu] = (r.stdout.split()[0], index)
    name, index = runs["portable"]
    if name == "x86-64-v3":
        assert b"x86-64-v3" in index
        if host != "x86-64-v3":
            assert host.encode() not in index and b"+avx" not in index
    name, index = runs["native"]
    assert name == host and host.encode() in index
    import numba
    assert numba.config.CPU_NAME in (None, os.environ.get("NUMBA_CPU_NAME"))   # numba's own setting untouched
