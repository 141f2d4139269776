"""Packaging hook (the project's metadata is in pyproject.toml).

While ``pip install .`` builds the package, this compiles every numba kernel of
``screwdyn.algorithms`` into numba's cache inside the build tree (``algorithms/__pycache__``), so
that the installed package carries it: numba keys a cached kernel on the content of its source, the
numba version (pinned here and in the dependencies alike) and the CPU, so the first call of every
function on the machine that installed it loads in milliseconds instead of compiling. An editable
install (``pip install -e .``) compiles on first use instead; ``SCREWDYN_PRECOMPILE=0`` skips it.
"""
import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

COMPILE = """
import sys, time
from screwdyn.dispatch import precompile
t0 = time.perf_counter()
total = precompile(lambda name, seconds: print(f"screwdyn: compiled {name} in {seconds:.1f} s", flush=True))
print(f"screwdyn: every kernel compiled into the package in {total:.0f} s", flush=True)
"""


class BuildPyWithKernels(build_py):
    """``build_py``, then the kernels compiled into the built package's numba cache."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False) or os.environ.get("SCREWDYN_PRECOMPILE", "1") == "0":
            return
        env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "SCREWDYN_NUMBA")}
        env["PYTHONPATH"] = os.pathsep.join([os.path.abspath(self.build_lib)]
                                            + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))
        print("screwdyn: compiling the numba kernels into the package (about a minute)", flush=True)
        subprocess.run([sys.executable, "-c", COMPILE], env=env, check=True)


setup(cmdclass={"build_py": BuildPyWithKernels})
