"""The class report's charts (autograder/class_reports/charts.py): what a TA reads
on them stays readable."""
import pytest

pytest.importorskip("matplotlib")

from autograder.class_reports import charts  # noqa: E402


def test_the_pass_rate_legend_sits_above_the_bars_and_hides_no_value(monkeypatch, tmp_path):
    """A class that passed nearly everything: the top bars reach the right edge, where
    a legend inside the axes would cover their values."""
    modules = ("amp_update", "loss_scaler", "amp_training_step")
    rates = [(f"t{index}", {"name": f"{modules[index % 3]}: a test title number {index} of this class",
                            "module": modules[index % 3], "visibility": "hidden"}, 40, 40)
             for index in range(30)]
    monkeypatch.setattr(charts, "pass_rates", lambda rows, columns: rates)
    drawn = []
    monkeypatch.setattr(charts, "_save", lambda figure, path: drawn.append(figure))
    with charts._fonts():
        charts._draw_pass_rates(tmp_path / "rates.png", [], [])
    figure = drawn[0]
    renderer = figure.canvas.get_renderer()
    axes = figure.axes[0]
    legend = axes.get_legend().get_window_extent(renderer)
    bars = axes.get_window_extent(renderer)
    title = axes.title.get_window_extent(renderer)
    assert legend.y0 >= bars.y1 - 1, "the legend overlaps the bars"
    assert title.y0 >= legend.y1 - 1, "the title overlaps the legend"
    assert legend.y1 <= figure.bbox.y1 and title.y1 <= figure.bbox.y1
    values = [text for text in axes.texts if text.get_text().endswith("%")]
    assert len(values) == 30 and all(not legend.overlaps(text.get_window_extent(renderer)) for text in values)
