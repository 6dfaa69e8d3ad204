"""Charts of a report as SVG geometry, drawn by templates/evaluation/charts/*.html.

Pure layout: each function turns numbers into positions and the text every
mark carries, and the templates write the SVG (escaped like any template).
Every chart has a title and a description (``role="img"`` with
``aria-labelledby``) and prints its values as text next to the marks, so it
reads without colour, without JavaScript and through a screen reader; the
report page also has the same numbers in tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evaluation.reports import Summary

WIDTH = 560
ROW = 26
BAR = 18
LABEL_WIDTH = 190
VALUE_WIDTH = 110
TOP = 8


@dataclass(frozen=True)
class HBar:
    label: str
    value: str  # the value as text, after the bar
    y: float  # top of the row
    width: float  # bar length in px
    text_y: float

    @property
    def value_x(self) -> float:
        return LABEL_WIDTH + self.width + 6


@dataclass(frozen=True)
class HBarChart:
    id: str
    title: str
    description: str
    height: int
    bars: list[HBar]
    width: int = WIDTH
    label_width: int = LABEL_WIDTH
    bar_height: int = BAR
    label_x: int = LABEL_WIDTH - 8


def _hbars(chart_id: str, title: str, description: str, rows: Sequence[tuple[str, float, str]]) -> HBarChart:
    """Horizontal bars; ``rows`` are (label, fraction of the full length 0..1, value text)."""
    span = WIDTH - LABEL_WIDTH - VALUE_WIDTH
    bars = [
        HBar(
            label,
            value,
            TOP + i * ROW,
            round(max(0.0, min(fraction, 1.0)) * span, 1),
            TOP + i * ROW + BAR - 4,
        )
        for i, (label, fraction, value) in enumerate(rows)
    ]
    return HBarChart(chart_id, title, description, TOP * 2 + ROW * max(len(rows), 1), bars)


def outcome_chart(summary: Summary, chart_id: str, title: str = "Outcomes") -> HBarChart:
    largest = max((count for _, count, _ in summary.outcomes), default=0) or 1
    rows = [(name, count / largest, f"{count:,} ({share:.0%})") for name, count, share in summary.outcomes]
    listed = "; ".join(f"{name}: {count:,}" for name, count, _ in summary.outcomes)
    return _hbars(chart_id, title, f"Number of results per outcome, in rule order. {listed}.", rows)


def pass_rate_chart(summary: Summary, chart_id: str, title: str = "Pass rate per criterion") -> HBarChart:
    rows = [
        (key, rate or 0.0, "n/a" if rate is None else f"{rate:.0%}") for key, _, rate in summary.pass_rates
    ]
    listed = "; ".join(f"{key}: {value}" for key, _, value in rows)
    return _hbars(chart_id, title, f"Share of results in which each criterion or gate holds. {listed}.", rows)


@dataclass(frozen=True)
class Column:
    label: str
    count: int
    x: float
    y: float
    height: float
    center: float

    @property
    def value_y(self) -> float:
        return round(self.y - 4, 1)


@dataclass(frozen=True)
class HistogramChart:
    id: str
    title: str
    description: str
    columns: list[Column]
    width: int = WIDTH
    height: int = 200
    baseline: float = 170
    column_width: float = 0

    @property
    def label_y(self) -> float:
        return self.baseline + 16


def histogram_chart(summary: Summary, chart_id: str, title: str = "Scores") -> HistogramChart:
    bins = summary.histogram
    left, plot_height, baseline = 10, 140, 170
    step = (WIDTH - 2 * left) / max(len(bins), 1)
    largest = max((b.count for b in bins), default=0) or 1
    columns = []
    for i, b in enumerate(bins):
        height = round(b.count / largest * plot_height, 1)
        x = left + i * step + 2
        columns.append(
            Column(b.label, b.count, round(x, 1), baseline - height, height, round(x + (step - 4) / 2, 1))
        )
    listed = "; ".join(f"{b.label}: {b.count:,}" for b in bins)
    description = f"Number of results per score range, from 0 to 1. {listed}."
    return HistogramChart(chart_id, title, description, columns, column_width=round(step - 4, 1))


@dataclass(frozen=True)
class Interval:
    label: str
    text: str
    y: float
    mean_x: float
    low_x: float
    high_x: float

    @property
    def text_y(self) -> float:
        return self.y + 4


@dataclass(frozen=True)
class IntervalChart:
    id: str
    title: str
    description: str
    rows: list[Interval]
    ticks: list[tuple[float, str]]
    height: int
    axis_y: float
    width: int = WIDTH
    plot_left: int = LABEL_WIDTH
    plot_right: int = WIDTH - VALUE_WIDTH
    label_x: int = LABEL_WIDTH - 8
    value_x: int = WIDTH - VALUE_WIDTH + 8

    @property
    def tick_y(self) -> float:
        return self.axis_y + 16


def interval_chart(
    groups: Sequence[tuple[str, Summary]], chart_id: str, title: str = "Mean score (95% bootstrap interval)"
) -> IntervalChart:
    span = WIDTH - LABEL_WIDTH - VALUE_WIDTH

    def x(value: float) -> float:
        return round(LABEL_WIDTH + value * span, 1)

    rows = []
    for i, (label, summary) in enumerate(group for group in groups if group[1].mean is not None):
        mean = summary.mean or 0.0
        low, high = summary.interval or (mean, mean)
        y = TOP + i * ROW + BAR / 2
        rows.append(Interval(label, f"{mean:.2f} [{low:.2f}, {high:.2f}]", y, x(mean), x(low), x(high)))
    axis_y = TOP + ROW * max(len(rows), 1) + 4
    ticks = [(x(value), f"{value:g}") for value in (0, 0.25, 0.5, 0.75, 1)]
    listed = "; ".join(f"{row.label}: {row.text}" for row in rows)
    description = (
        f"Mean score of each group with its 95% bootstrap interval, on a scale from 0 to 1. {listed}."
    )
    return IntervalChart(chart_id, title, description, rows, ticks, int(axis_y + 24), axis_y)
