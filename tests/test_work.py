"""Work buffers of the kernels (src/screwdyn/algorithms/work.py): a single state takes its buffer
from the stack, or from the heap above STACK_LIMIT floats; both give the batch kernels' results."""
import numpy as np
import pytest

import screwdyn
from screwdyn.algorithms import work
from helpers import random_model, random_state


@pytest.mark.parametrize("n", [5, 700])
def test_single_state_matches_batch_on_both_sides_of_the_stack_limit(rng, n):
    model = random_model(rng, n=n, fixed=3, branching=0.3)
    heap = work.work_size.py_func(model.n) > work.STACK_LIMIT
    assert heap == (n == 700)
    Q, QD, QDD = random_state(rng, model.n, (2,))
    for f, args in [(screwdyn.inverse_dynamics, (Q, QD, QDD)), (screwdyn.mass_matrix, (Q,)),
                    (screwdyn.forward_dynamics, (Q, QD, QDD)), (screwdyn.coriolis_matrix, (Q, QD))]:
        batch = f(model, *args)
        for k in range(2):
            single = f(model, *(a[k] for a in args))
            np.testing.assert_allclose(single, batch[k], rtol=1e-12, atol=1e-12 * np.abs(batch).max(), err_msg=f.__name__)


def test_block_views_alias_the_buffer():
    w = np.arange(40.0)
    b2 = work.block2.py_func(w, 4, 3, 5)
    b3 = work.block3.py_func(w, 10, 2, 3, 4)
    np.testing.assert_array_equal(b2, w[4:19].reshape(3, 5))
    np.testing.assert_array_equal(b3, w[10:34].reshape(2, 3, 4))
    b2[1, 2] = -1.0
    assert w[4 + 5 + 2] == -1.0
