"""The class report's charts (autograder/class_reports/charts.py): what a TA reads
on them stays readable."""
import pytest

pytest.importorskip("matplotlib")

from autograder.class_reports import charts  # noqa: E402


def _pass_rate_chart(monkeypatch, tmp_path, rates):
    """The pass-rate chart's figure for ``rates`` (as charts.pass_rates gives them), not saved."""
    monkeypatch.setattr(charts, "pass_rates", lambda rows, columns: rates)
    drawn = []
    monkeypatch.setattr(charts, "_save", lambda figure, path: drawn.append(figure))
    with charts._fonts():
        charts._draw_pass_rates(tmp_path / "rates.png", [], [])
    return drawn[0]


def test_the_pass_rate_legend_sits_above_the_bars_and_hides_no_value(monkeypatch, tmp_path):
    """A class that passed nearly everything: the top bars reach the right edge, where
    a legend inside the axes would cover their values."""
    modules = ("amp_update", "loss_scaler", "amp_training_step")
    rates = [(f"t{index}", {"name": f"{modules[index % 3]}: a test title number {index} of this class",
                            "module": modules[index % 3], "visibility": "hidden"}, 40, 40)
             for index in range(30)]
    figure = _pass_rate_chart(monkeypatch, tmp_path, rates)
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


def test_each_pass_rate_bar_has_its_label_beside_it_inside_the_picture(monkeypatch, tmp_path):
    """The labels are texts left of the axes (no tick per test): one per bar, at the bar's
    height, in the bars' order, none cut off at the left edge or overlapping the next."""
    modules = ("amp_update", "loss_scaler", "amp_training_step")
    rates = [(f"t{index}", {"name": f"{modules[index % 3]}: the check number {index} of a long test title here",
                            "module": modules[index % 3], "visibility": "hidden" if index % 2 else "visible"},
              index, 40) for index in range(40)]
    figure = _pass_rate_chart(monkeypatch, tmp_path, rates)
    renderer = figure.canvas.get_renderer()
    axes = figure.axes[0]
    inside = axes.get_window_extent(renderer)
    labels = [text for text in axes.texts if not text.get_text().endswith("%")]
    bars = sorted(axes.patches, key=lambda bar: -bar.get_window_extent(renderer).y1)  # top first
    assert len(labels) == len(bars) == 40
    assert not len(axes.get_yticks()), "no tick per test"
    boxes = [label.get_window_extent(renderer) for label in labels]
    for label, box, bar in zip(labels, boxes, bars):
        bar_box = bar.get_window_extent(renderer)
        assert bar_box.y0 <= (box.y0 + box.y1) / 2 <= bar_box.y1, label.get_text()
        assert box.x1 <= inside.x0 and box.x0 >= figure.bbox.x0, label.get_text()
    # lowest pass rate first: the top bar is test 0
    assert labels[0].get_text().startswith("the check number 0 ")
    assert all(upper.y0 >= lower.y1 - 0.5 for upper, lower in zip(boxes, boxes[1:]))
