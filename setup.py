"""Packaging hook (the project's metadata is in pyproject.toml).

While ``pip install .`` builds the package, this compiles the entry points of the README's main
calls (``screwdyn.precompile.INSTALL``: about 40 s of CPU, over every core) into numba's cache inside
the build tree (``algorithms/__pycache__``), so that the installed package carries them and their
first calls load in milliseconds; every other kernel compiles on its first use. The cache is keyed
on the sources, the numba version (pinned here and in the dependencies alike) and a portable CPU
level (x86-64-v3: ``screwdyn.algorithms.target``), so a wheel built once serves every machine of
that level. An editable install (``pip install -e .``) compiles on first use instead;
``SCREWDYN_PRECOMPILE=0`` skips it.
"""
import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

COMPILE = """
from screwdyn.precompile import compile_ahead
total = compile_ahead("install", report=lambda name, seconds, done, count: print(
    f"screwdyn: [{done:2d}/{count}] compiled {name}", flush=True))
print(f"screwdyn: the main kernels compiled into the package in {total:.0f} s", flush=True)
"""


class BuildPyWithKernels(build_py):
    """``build_py``, then the main kernels compiled into the built package's numba cache."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False) or os.environ.get("SCREWDYN_PRECOMPILE", "1") == "0":
            return
        env = {k: v for k, v in os.environ.items()
               if k not in ("NUMBA_CACHE_DIR", "SCREWDYN_NUMBA", "SCREWDYN_CPU", "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES")}
        env["PYTHONPATH"] = os.pathsep.join([os.path.abspath(self.build_lib)]
                                            + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))
        print("screwdyn: compiling the main numba kernels into the package (about 30 s on 2 cores)", flush=True)
        subprocess.run([sys.executable, "-c", COMPILE], env=env, check=True)


setup(cmdclass={"build_py": BuildPyWithKernels})
