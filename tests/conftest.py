import os

# One BLAS thread: the suite runs on 2 cores next to numba's own threads; oversubscribed BLAS
# made least-squares tests several times slower. Set before numpy is imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np
import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running test (deselect with -m 'not slow')")


@pytest.fixture
def rng():
    return np.random.default_rng(int(os.environ.get("SCREWDYN_TEST_SEED", "20261122")))
