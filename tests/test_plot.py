"""Pictures render without a display and say what they should."""
import numpy as np
import pytest

import screwdyn
from screwdyn import models, plot
from screwdyn.errors import InputError
from screwdyn.sim import simulate

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def short_run():
    arm = models.load("planar_2r")
    return arm, simulate(arm, [0.3, 0.0], None, 0.3, 1e-2, tau=[1.0, 0.0])


def test_plot_trajectory_png(short_run, tmp_path):
    arm, tr = short_run
    out = tmp_path / "traj.png"
    fig = plot.plot_trajectory(tr, out)
    assert out.read_bytes()[:8] == PNG and out.stat().st_size > 20_000
    assert len(fig.axes) == 2 + 3                      # a position panel per joint; velocities, torques, energies
    assert "position" in fig.axes[0].get_title() and "energy" in fig.axes[-1].get_ylabel()
    # each joint's position in its panel, and kinetic / potential / total in the energy panel
    for j in range(2):
        np.testing.assert_array_equal(fig.axes[j].lines[0].get_ydata(), tr.q[:, j])
    assert len(fig.axes[-1].lines) == 3
    np.testing.assert_allclose(fig.axes[-1].lines[2].get_ydata(), tr.total_energy)


def test_the_position_panels_draw_the_joint_limits_and_the_reference(tmp_path):
    """The panda's joint limits: a dashed line at each and the range beyond it grey, in view; a
    reference dashed in black."""
    from screwdyn.trajectory import JointTrajectory

    panda = models.load("panda")
    q0 = models.home("panda")
    tr = simulate(panda, q0, None, 0.2, 1e-2, tau=screwdyn.gravity_torques(panda, q0))
    ref = JointTrajectory(q0, q0 + 0.1, 0.2)
    fig = plot.plot_trajectory(tr, tmp_path / "p.png", reference=ref)
    assert len(fig.axes) == 7 + 3
    for j in range(7):
        ax = fig.axes[j]
        dashed = sorted(ln.get_ydata()[0] for ln in ax.lines if ln.get_linestyle() == "--" and ln.get_color() != "k")
        assert dashed == pytest.approx([panda.q_lower[j], panda.q_upper[j]])
        lo, hi = ax.get_ylim()
        assert lo < panda.q_lower[j] and hi > panda.q_upper[j] and len(ax.patches) == 2   # grey beyond each
        np.testing.assert_allclose(next(ln for ln in ax.lines if ln.get_color() == "k").get_ydata(), ref(tr.t)[0][:, j])


def test_a_batch_is_drawn_as_fans_of_percentiles(tmp_path):
    arm = models.load("planar_2r")
    q0 = np.linspace(-0.5, 0.5, 21)[:, None] * [1.0, 0.0]
    tr = simulate(arm, q0, None, 0.3, 1e-2)
    fig = plot.plot_trajectory(tr, tmp_path / "fan.png")
    ax = fig.axes[0]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), np.median(tr.q[:, :, 0], axis=0))   # the median
    bands = ax.collections                             # 5-95 %, then 25-75 %
    assert len(bands) == 2
    lo95 = bands[0].get_paths()[0].vertices[:, 1].min()
    assert lo95 == pytest.approx(np.percentile(tr.q[:, :, 0], 5, axis=0).min())
    assert "21 rollouts" in fig.texts[0].get_text()


def test_animation_of_a_batch_member(tmp_path):
    arm = models.load("planar_2r")
    tr = simulate(arm, [[0.3, 0.0], [1.0, 0.0]], None, 0.3, 1e-2)
    assert plot.animate(arm, tr, tmp_path / "m.gif", fps=10, member=1) == 4
    with pytest.raises(InputError, match="member"):
        plot.animate(arm, tr[0], tmp_path / "x.gif", member=1)


def test_plot_torques_a_panel_per_joint(tmp_path):
    """Measured against predicted torques: one panel per joint, its title the RMS difference."""
    puma = models.load("puma560")
    t = np.linspace(0.0, 1.0, 50)
    measured = np.sin(np.outer(t, np.arange(1, 7)))
    out = tmp_path / "tau.png"
    fig = plot.plot_torques(out, puma, t, measured, measured + 0.5, title="fit", labels=("measured", "fitted"))
    assert out.read_bytes()[:8] == PNG
    panels = [ax for ax in fig.axes if ax.lines]
    assert len(panels) == 6 and len(fig.axes) == 6            # 2 columns of 3: none left over
    assert all(ax.get_title(loc="right") == "RMS error 0.5" for ax in panels)
    assert [ln.get_label() for ln in panels[0].lines] == ["measured", "fitted"]
    assert panels[0].get_ylabel().startswith(puma.joint_names[0])


def test_skeleton_of_the_2r_arm():
    arm = models.load("planar_2r")
    names = arm.frame_names
    pairs = [(names[a], names[b]) for a, b in plot.skeleton(arm)]
    assert pairs == [("base", "link1"), ("link1", "link2"), ("link2", "tip")]


@pytest.mark.parametrize("name", models.names())
def test_plot_robot_every_bundled_model(name, tmp_path):
    out = tmp_path / f"{name}.png"
    fig = plot.plot_robot(models.load(name), models.home(name), out)
    assert out.read_bytes()[:8] == PNG
    ax = fig.axes[0]
    segments = [ln for ln in ax.lines if ln.get_linestyle() == "-"]
    assert len(segments) == len(plot.skeleton(models.load(name)))


def test_stick_figure_follows_forward_kinematics():
    arm = models.load("planar_2r")
    fig = plot.plot_robot(arm, [np.pi / 2, 0.0])
    ax = fig.axes[0]
    x, y, z = ax.lines[-2].get_data_3d()           # the last segment: link2 -> tip
    np.testing.assert_allclose(z, [1.0, 2.0], atol=1e-12)   # arm pointing straight up
    np.testing.assert_allclose(x, [0.0, 0.0], atol=1e-12)


def test_animation_gif(short_run, tmp_path):
    from PIL import Image

    arm, tr = short_run
    out = tmp_path / "arm.gif"
    frames = plot.animate(arm, tr, out, fps=10)
    assert frames == 4                                  # 0.3 s at 10 frames per second, both ends
    with Image.open(out) as im:
        assert im.format == "GIF" and im.n_frames == frames


def test_animation_errors(short_run, tmp_path):
    arm, tr = short_run
    with pytest.raises(InputError, match=".gif or .mp4"):
        plot.animate(arm, tr, tmp_path / "arm.avi")
    with pytest.raises(InputError, match="joints"):
        plot.animate(models.load("panda"), tr, tmp_path / "x.gif")
    from matplotlib.animation import FFMpegWriter
    if not FFMpegWriter.isAvailable():
        with pytest.raises(InputError, match="ffmpeg"):
            plot.animate(arm, tr, tmp_path / "arm.mp4")
