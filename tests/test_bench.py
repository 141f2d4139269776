"""The side-by-side benchmark (src/screwdyn/bench.py) on a small run: one row per function and
batch size, both libraries timed, and their numbers equal (the check it prints as maxrel)."""
import pytest

pytest.importorskip("pinocchio")


def test_bench_rows_time_both_libraries_and_agree():
    from screwdyn import bench

    lines = []
    rows = bench.run(robots=("ur5",), batches=(40,), repeats=3, out=lines.append)
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("ur5", name, B) for name in ("inverse_dynamics", "mass_matrix", "mass_matrix_inverse", "forward_dynamics",
                                      "coriolis_matrix", "inverse_dynamics_derivatives", "forward_dynamics_derivatives")
        for B in (1, 40)]
    for rname, name, B, t_sd, t_pin, label, err in rows:
        assert t_sd > 0 and t_pin > 0
        assert err < 1e-10, (name, B, err)
    assert len(lines) == len(rows) and all("ratio" in line for line in lines)
    table = bench.markdown(rows)
    assert table.count("\n") == len(rows) + 1 and "| ur5 | coriolis_matrix | 40 |" in table


def test_bench_times_only_the_functions_asked_for():
    from screwdyn import bench

    rows = bench.run(robots=("ur5",), batches=(8,), repeats=3, out=lambda line: None,
                     functions=("forward_dynamics",))
    assert [(r[1], r[2]) for r in rows] == [("forward_dynamics", 1), ("forward_dynamics", 8)]
    assert all(r[6] < 1e-10 for r in rows)


def test_bench_calls_write_into_one_output_or_fresh_ones(monkeypatch):
    """By default a call of screwdyn, one state or a batch, gets ``out=`` (made once, as Pinocchio
    writes into its ``Data`` or ``res``); with ``fresh_outputs`` none. Either way its answers are
    checked against Pinocchio's."""
    import screwdyn
    from screwdyn import bench

    for fresh in (False, True):
        outs = []
        real = screwdyn.mass_matrix

        def spy(model, q, out=None):
            outs.append((q.ndim, out))
            return real(model, q, out)
        monkeypatch.setattr(screwdyn, "mass_matrix", spy)
        rows = bench.run(robots=("ur5",), batches=(5,), repeats=3, out=lambda line: None,
                         functions=("mass_matrix",), fresh_outputs=fresh)
        monkeypatch.undo()
        timed = outs[1:]   # the first call is the check of one state, as a user writes it
        assert {d for d, o in timed} == {1, 2} and all((o is None) == fresh for d, o in timed)
        if not fresh:
            for ndim, shape in ((1, (6, 6)), (2, (5, 6, 6))):
                made = [o for d, o in timed if d == ndim]
                assert all(o is made[0] and o.shape == shape for o in made)
        assert rows[0][2] == 1 and rows[1][2] == 5 and rows[0][6] < 1e-10 and rows[1][6] < 1e-10
