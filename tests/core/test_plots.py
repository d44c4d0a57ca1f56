import matplotlib

from paperkit.core import plots


def test_figures_leave_the_callers_backend_alone(tmp_path):
    before = matplotlib.get_backend()
    matplotlib.use("pdf", force=True)  # a notebook's or GUI program's own choice
    try:
        fig, ax = plots.new_figure(1, 2, figsize=(4, 2))
        ax[0].plot([0, 1], [1, 0])
        plots.save_figure(fig, tmp_path / "a.png")
        plots.save_figure(fig, tmp_path / "b.png")
        assert matplotlib.get_backend() == "pdf"
        data = (tmp_path / "a.png").read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert data == (tmp_path / "b.png").read_bytes()  # no timestamps
    finally:
        matplotlib.use(before, force=True)
