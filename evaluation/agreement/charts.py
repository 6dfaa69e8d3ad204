"""Charts of the agreement page as SVG geometry: a bar per field, a matrix of annotator pairs.

Pure layout over the figures of ``evaluation.agreement.project``, drawn by
templates/evaluation/charts/_hbars.html (the rubric report's bars) and
_heatmap.html. Like the report's charts, each has a title and a
description listing its values, and prints every value as text, so it reads
without colour and through a screen reader; the page has the same numbers
in tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluation.charts import BAR, LABEL_WIDTH, ROW, TOP, VALUE_WIDTH, WIDTH, HBar, HBarChart

# Beyond this many annotators a matrix is unreadable: the page lists the pairs instead.
HEATMAP_MAX_ANNOTATORS = 30
HEATMAP_LABEL_WIDTH = 120  # at most: longer names run off the edge (the tooltips and the table have them)
CHARACTER_WIDTH = 7  # about, at the charts' 12px
NEUTRAL = (255, 255, 255)
AGREE = (31, 111, 139)  # towards 1
DISAGREE = (181, 74, 60)  # towards -1
MISSING = "#e4e4e4"


def headline_chart(scheme: Mapping[str, Any], chart_id: str) -> HBarChart:
    """One bar per field of a scheme: its first measure (alpha, span F1, Kendall's W), from 0 to 1.

    Values below 0 (agreement below chance) get no bar; their value is still printed.
    """
    span = WIDTH - LABEL_WIDTH - VALUE_WIDTH
    bars, listed = [], []
    for index, field in enumerate(scheme["fields"]):
        measure = field["measures"][0]
        value = measure["value"]
        text = "undefined" if value is None else measure["shown"]
        label = field["field"]
        y = TOP + index * ROW
        width = 0.0 if value is None else round(max(0.0, min(value, 1.0)) * span, 1)
        bars.append(HBar(label, text, y, width, y + BAR - 4))
        listed.append(f"{label}: {measure['measure']} {text}")
    title = f"Agreement on {scheme['scheme']}"
    description = f"The first measure of each field, on a scale to 1. {'; '.join(listed)}."
    return HBarChart(chart_id, title, description, TOP * 2 + ROW * max(len(bars), 1), bars)


@dataclass(frozen=True)
class HeatCell:
    x: float
    y: float
    fill: str
    text: str  # the value as printed in the cell ("" when the cell is too small for it)
    title: str  # the pair, the measure's value and its units, for the tooltip
    text_x: float
    text_y: float
    dark: bool = False  # a strong colour: the value is printed in white


@dataclass(frozen=True)
class HeatLabel:
    text: str
    x: float
    y: float


@dataclass(frozen=True)
class HeatmapChart:
    id: str
    title: str
    description: str
    width: int
    height: int
    cell: int
    cells: list[HeatCell]
    rows: list[HeatLabel]
    columns: list[HeatLabel]


def pair_heatmap(pairs: Sequence[Mapping[str, Any]], chart_id: str, title: str) -> HeatmapChart | None:
    """A symmetric matrix of one pair measure between annotators (None when there are too many of them).

    Cells run from red (-1) through white (0) to blue (1); a pair with no
    value is grey and says why in its tooltip.
    """
    annotators = sorted({pair["a"] for pair in pairs} | {pair["b"] for pair in pairs})
    if len(annotators) < 2 or len(annotators) > HEATMAP_MAX_ANNOTATORS:
        return None
    cell = max(22, min(56, 420 // len(annotators)))
    # Room for the names: beside the rows, and above the columns where they slant at 45°.
    longest = max(len(name) for name in annotators) * CHARACTER_WIDTH
    left = min(HEATMAP_LABEL_WIDTH, longest + 12)
    top = min(HEATMAP_LABEL_WIDTH, round(longest * 0.72) + 14)
    by_pair = {(pair["a"], pair["b"]): pair for pair in pairs}
    cells = []
    for row, first in enumerate(annotators):
        for column, second in enumerate(annotators):
            if row == column:
                continue
            pair = by_pair.get((first, second)) or by_pair.get((second, first))
            x, y = left + column * cell, top + row * cell
            if pair is None:
                fill, text, tip = MISSING, "", f"{first} and {second}: no item in common"
            elif pair["value"] is None:
                fill, text = MISSING, "n/a"
                tip = f"{first} and {second}: undefined ({pair['undefined_reason']})"
            else:
                fill, text = _colour(pair["value"]), f"{pair['value']:.2f}"
                tip = f"{first} and {second}: {pair['shown']} over {pair['n_units']:,} units"
            dark = pair is not None and pair["value"] is not None and abs(pair["value"]) > 0.55
            shown = text if cell >= 34 else ""
            cells.append(HeatCell(x, y, fill, shown, tip, x + cell / 2, y + cell / 2 + 4, dark))
    rows = [
        HeatLabel(name, left - 6, top + index * cell + cell / 2 + 4) for index, name in enumerate(annotators)
    ]
    columns = [
        HeatLabel(name, left + index * cell + cell / 2, top - 6) for index, name in enumerate(annotators)
    ]
    listed = "; ".join(
        f"{pair['a']} and {pair['b']}: {'undefined' if pair['value'] is None else pair['shown']}"
        for pair in pairs
    )
    description = (
        f"{title} for each pair of annotators, from -1 (red) through 0 (white) to 1 (blue). {listed}."
    )
    width = left + cell * len(annotators) + top
    height = top + cell * len(annotators) + 8
    return HeatmapChart(chart_id, title, description, width, height, cell, cells, rows, columns)


def _colour(value: float) -> str:
    value = max(-1.0, min(value, 1.0))
    end = AGREE if value >= 0 else DISAGREE
    share = abs(value)
    red, green, blue = (round(n + (e - n) * share) for n, e in zip(NEUTRAL, end, strict=True))
    return f"#{red:02x}{green:02x}{blue:02x}"
