"""The package's import surface (screwdyn/__init__.py, dynamics._LazyKernels): what ``import
screwdyn`` loads at once and what on first use, each run in a fresh interpreter."""
import subprocess
import sys
import textwrap


def run_fresh(code):
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_import_leaves_other_kernels_and_readers_for_first_use():
    out = run_fresh("""
        import sys
        import numpy as np
        import screwdyn
        lazy = ["screwdyn.algorithms." + m for m in ("aba", "crba", "coriolis", "energy", "kinematics", "ltdl")]
        lazy += ["screwdyn.io.urdf", "screwdyn.sim", "screwdyn.trajectory", "screwdyn.models", "sympy", "defusedxml"]
        print(sorted(m for m in lazy if m in sys.modules))
        b = screwdyn.ModelBuilder("one_link")
        b.add_body("a", "base", "j1", "revolute", mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 1e-3)
        model = b.build()
        x = np.array([0.3])
        tau = screwdyn.inverse_dynamics(model, x, x, x)
        assert "screwdyn.algorithms.aba" not in sys.modules
        qdd = screwdyn.forward_dynamics(model, x, x, tau)   # loads aba on first use
        assert abs(qdd[0] - 0.3) < 1e-12, qdd
        print("screwdyn.algorithms.aba" in sys.modules)
    """)
    assert out.split("\n")[:2] == ["[]", "True"]


def test_lazy_names_resolve_and_star_import_gives_the_public_api():
    out = run_fresh("""
        import screwdyn
        for name in screwdyn.__all__:
            getattr(screwdyn, name)
        assert {"load_urdf", "simulate", "models", "identify", "symbolic"} <= set(dir(screwdyn))
        ns = {}
        exec("from screwdyn import *", ns)
        assert {"load_urdf", "simulate", "Trajectory", "SimulationError", "JointTrajectory", "models",
                "inverse_dynamics", "Model"} <= set(ns), sorted(ns)
        assert screwdyn.load_urdf is screwdyn.io.urdf.load_urdf
        print(screwdyn.models.load("planar_2r").n)
    """)
    assert out.strip() == "2"


def test_first_calls_from_many_threads_at_once():
    """The kernel modules load on first use; eight threads making their first calls together all
    get answers (the import lock, then the module replaces its stand-in)."""
    out = run_fresh("""
        import threading
        import numpy as np
        import screwdyn
        model = screwdyn.models.load("planar_2r")
        x = np.array([0.2, -0.4])
        errors, results = [], []
        barrier = threading.Barrier(8)

        def work():
            try:
                barrier.wait()
                results.append((screwdyn.forward_dynamics(model, x, x, x), screwdyn.mass_matrix(model, x),
                                screwdyn.kinetic_energy(model, x, x), screwdyn.coriolis_matrix(model, x, x)))
            except Exception as e:   # reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        for r in results[1:]:
            for a, b in zip(r, results[0]):
                assert np.array_equal(a, b)
        print(len(results))
    """)
    assert out.strip() == "8"


_CACHE_PROBE = """
import sys
import numpy as np
import numba
import screwdyn
assert screwdyn.__file__.startswith(sys.argv[1]), screwdyn.__file__
b = screwdyn.ModelBuilder("one_link")
b.add_body("a", "base", "j1", "revolute", mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 1e-3)
model = b.build()
x = np.array([0.3])
screwdyn.inverse_dynamics(model, x, x, x)
hits = misses = 0
paths = set()
for name, mod in list(sys.modules.items()):
    if not name.startswith("screwdyn."):
        continue
    for obj in list(vars(mod).values()):
        if isinstance(obj, numba.core.registry.CPUDispatcher) and obj._cache_hits + obj._cache_misses:
            s = obj.stats
            if s.cache_path is None:   # (a function compiled only into entry points: not cached)
                continue
            hits += sum(s.cache_hits.values())
            misses += sum(s.cache_misses.values())
            paths.add(s.cache_path)
print(hits, misses, *sorted(paths))
"""


def test_compile_cache_works_from_a_read_only_package_directory(tmp_path):
    """A system install leaves the package directory read-only: numba then caches the kernels in
    the user's cache directory, and the next process loads them from there instead of compiling.
    The package is copied and bind-mounted read-only in a private mount namespace (as root, a
    chmod would not stop writes); skipped where the sandbox forbids mounts."""
    import os
    import shutil

    import screwdyn

    pkg = tmp_path / "site"
    shutil.copytree(os.path.dirname(screwdyn.__file__), pkg / "screwdyn",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    probe = tmp_path / "probe.py"
    probe.write_text(_CACHE_PROBE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE")}
    env.update(PYTHONPATH=str(pkg), XDG_CACHE_HOME=str(tmp_path / "xdg"), HOME=str(tmp_path),
               PYTHONDONTWRITEBYTECODE="1")
    import pytest
    if shutil.which("unshare") is None:
        pytest.skip("no unshare here for a private read-only bind mount")
    ro = f"mount --bind {pkg} {pkg} && mount -o remount,ro,bind {pkg} {pkg}"
    check = subprocess.run(["unshare", "-m", "sh", "-c", f"{ro} && ! touch {pkg}/x 2>/dev/null"],
                           capture_output=True, text=True)
    if check.returncode != 0:
        pytest.skip(f"no private read-only bind mount here: {check.stderr.strip()}")

    def run():
        r = subprocess.run(["unshare", "-m", "sh", "-c", f'{ro} && exec "$0" "$1" "$2"', sys.executable,
                            str(probe), str(pkg)], env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        hits, misses, *paths = r.stdout.split()
        return int(hits), int(misses), paths

    hits, misses, paths = run()
    assert misses > 0 and hits == 0          # compiled, and written ...
    assert paths and all(p.startswith(str(tmp_path / "xdg")) for p in paths), paths   # ... in the user's cache
    assert not list((pkg / "screwdyn").rglob("*.nbi"))
    hits, misses, paths2 = run()
    assert hits > 0 and misses == 0, (hits, misses)   # the second process loads every kernel it used
    assert paths2 == paths
