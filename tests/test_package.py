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
