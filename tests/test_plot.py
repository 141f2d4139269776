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


def _panel_colours(ax):
    """The colours of a panel's labelled curves (reference and limit lines aside)."""
    from matplotlib.colors import to_rgba
    return [to_rgba(ln.get_color()) for ln in ax.lines if not ln.get_label().startswith("_")]


def test_a_floating_robot_has_its_base_apart_from_its_joints(tmp_path):
    """Solo12 spinning as it falls: the base's position and its roll, pitch, yaw in panels of their
    own, its twist in another; the joints' positions, velocities and torques without the base's;
    a legend in every panel and no colour twice in one."""
    solo = models.load("solo12")
    v0 = np.zeros(solo.nv)
    v0[:3] = [0.3, -0.2, 2.0]                          # the base's angular velocity (in its frame)
    tr = simulate(solo, models.home("solo12"), v0, 0.2, 1e-2)
    fig = plot.plot_trajectory(tr, tmp_path / "solo.png")
    assert (tmp_path / "solo.png").read_bytes()[:8] == PNG
    by_title = {ax.get_title(): ax for ax in fig.axes}
    base = by_title["base position [m] (world)"]
    for k, line in enumerate(base.lines):
        np.testing.assert_array_equal(line.get_ydata(), tr.q[:, k])
    turn = next(ax for title, ax in by_title.items() if title.startswith("orientation"))
    rpy = np.array([ln.get_ydata() for ln in turn.lines]).T
    np.testing.assert_allclose(rpy, plot.roll_pitch_yaw(tr.q[:, 3:7]), atol=1e-12)   # (no turn past pi here)
    assert rpy[-1, 2] > 0.3                            # it yaws
    joints = next(ax for title, ax in by_title.items() if title.startswith("joint position"))
    assert [ln.get_label() for ln in joints.lines if not ln.get_label().startswith("_")] == list(solo.joint_names[1:])
    np.testing.assert_array_equal(joints.lines[0].get_ydata(), tr.q[:, 7])
    velocity = next(ax for ax in fig.axes if ax.get_ylabel().startswith("joint velocity"))
    assert len(_panel_colours(velocity)) == 12        # the joints' 12, not the base's 6
    twist = by_title["base twist in its frame: omega [rad/s] solid, v [m/s] dashed"]
    np.testing.assert_array_equal(twist.lines[2].get_ydata(), tr.qd[:, 2])
    for ax in fig.axes:
        colours = _panel_colours(ax)
        assert ax.get_legend() is not None and len(colours) == len(set(colours)), ax.get_title() or ax.get_ylabel()


def test_roll_pitch_yaw_against_scipy():
    from scipy.spatial.transform import Rotation

    quats = np.random.default_rng(0).normal(size=(50, 4))
    yaw_pitch_roll = Rotation.from_quat(quats).as_euler("ZYX")      # (x, y, z, w), scalar last as ours
    np.testing.assert_allclose(plot.roll_pitch_yaw(quats), yaw_pitch_roll[:, ::-1], atol=1e-12)


def test_a_humanoid_joints_share_one_legend_below(tmp_path):
    """Talos' 32 joints: one legend for the joints' panels, below the figure, 32 colours all different."""
    talos = models.load("talos_reduced")
    tr = simulate(talos, models.home("talos_reduced"), None, 0.02, 1e-2)
    fig = plot.plot_trajectory(tr)
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == list(talos.joint_names[1:])
    colours = [tuple(h.get_color()) for h in legend.legend_handles]
    assert len(set(colours)) == 32
