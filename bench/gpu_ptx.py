"""Compile every GPU kernel to PTX and assemble it, without a GPU: a check that numba-cuda takes the
drivers and the CPU kernels' helpers as they are (NVVM types and lowers all of them), with the
registers and spills ptxas reports, and NVVM's compile time per kernel.

Needs numba-cuda, NVVM with libdevice (``CUDA_HOME``, e.g. /usr/local/cuda) and NVRTC (the
``nvidia-cuda-nvrtc`` wheel, or the toolkit's), and ``ptxas`` on PATH for the assembly::

    CUDA_HOME=/usr/local/cuda PATH=/usr/local/cuda/bin:$PATH python bench/gpu_ptx.py panda talos_reduced

numba-cuda asks the current device for its compute capability when it compiles a device function;
without a GPU this script answers for it (sm_90, an H100/H200).
"""
import shutil
import subprocess
import sys
import tempfile
import time
import types

import numba.cuda.dispatcher as _dispatcher
import numpy as np
from numba import boolean, cuda, float32, float64, int64

from screwdyn import models
from screwdyn.gpu import drivers

CC = (9, 0)
_dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=CC)


def signatures(ft):
    A1, A2, S = ft[:, ::1], ft[:, :, ::1], int64[::1]
    kd = float64[:, ::1]
    return {"rnea": (kd, A1, A1, A1, A2, boolean, A1, S), "aba": (kd, A1, A1, A1, A2, boolean, A1, S),
            "crba": (kd, A1, A2, S), "step": (kd, A1, A1, A1, float64, int64, int64, S)}


def main(names):
    ptxas = shutil.which("ptxas")
    print("| model | kernel | dtype | NVVM s | PTX lines | ptxas |\n|---|---|---|---|---|---|")
    for name in names:
        floating = name.endswith("+floating")
        m = models.load(name.removesuffix("+floating"), floating_base=floating)
        for dtype, ft in ((np.float64, float64), (np.float32, float32)):
            for kind, sig in signatures(ft).items():
                k = drivers.kernel(kind, m.n, m.nq, dtype)
                t = time.perf_counter()
                ptx, _ = cuda.compile_ptx(k.py_func, sig, cc=CC)
                dt = time.perf_counter() - t
                report = "-"
                if ptxas:
                    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
                        f.write(ptx)
                        f.flush()
                        r = subprocess.run([ptxas, f"-arch=sm_{CC[0]}{CC[1]}", "-v", f.name, "-o", "/dev/null"],
                                           capture_output=True, text=True)
                    lines = [x.split("info    :")[-1].strip() for x in r.stderr.splitlines() if "registers" in x or "spill" in x]
                    report = "; ".join(lines[-2:]) if r.returncode == 0 else "FAILED: " + r.stderr[-300:]
                print(f"| {name} | {kind} | {np.dtype(dtype).name} | {dt:.1f} | {ptx.count(chr(10))} | {report} |")


if __name__ == "__main__":
    main(sys.argv[1:] or ["panda", "ur5", "talos_reduced+floating"])
