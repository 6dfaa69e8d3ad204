"""Report statistics (outcomes, mean with a bootstrap interval, pass rates, histogram,
groups, agreement) and the SVG charts drawn from them. Pure: no database."""

from __future__ import annotations

import random
import statistics
import xml.etree.ElementTree as ET

import pytest
from django.template.loader import render_to_string

from evaluation import charts
from evaluation.reports import Row, binomial, bootstrap_interval, build_report, histogram, summarize

SVG = "{http://www.w3.org/2000/svg}"
OUTCOMES = ["pass", "fail"]
KEYS = ["a", "b"]


def rows(*specs: tuple[float, str, bool, bool, str | None]) -> list[Row]:
    return [Row(score, outcome, {"a": a, "b": b}, group) for score, outcome, a, b, group in specs]


SAMPLE = rows(
    (1.0, "pass", True, True, "model-a"),
    (0.5, "pass", True, False, "model-a"),
    (0.5, "pass", False, True, "model-b"),
    (0.0, "fail", False, False, "model-b"),
    (0.0, "fail", False, False, None),
)


def test_a_summary_counts_outcomes_in_rule_order_and_pass_rates_per_criterion():
    summary = summarize(SAMPLE, OUTCOMES, KEYS)

    assert summary.count == 5
    assert summary.outcomes == [("pass", 3, 0.6), ("fail", 2, 0.4)]
    assert summary.mean == 0.4
    assert summary.pass_rates == [("a", 2, 0.4), ("b", 2, 0.4)]


def test_outcomes_no_longer_in_the_rubric_are_still_counted_after_the_others():
    summary = summarize([*SAMPLE, Row(0.2, "retired", {}, None)], OUTCOMES, KEYS)

    assert [name for name, _, _ in summary.outcomes] == ["pass", "fail", "retired"]


def test_the_histogram_has_ten_bins_from_0_to_1_each_holding_its_low_edge():
    bins = histogram([0.0, 0.1, 0.55, 0.5, 0.79, 0.8, 1.0])

    assert [b.label for b in bins][:2] == ["0.0-0.1", "0.1-0.2"]
    assert [b.count for b in bins] == [1, 1, 0, 0, 0, 2, 0, 1, 1, 1]


def test_the_bootstrap_interval_is_the_same_every_time_and_brackets_the_mean():
    rng = random.Random(7)
    scores = [rng.choice([0.0, 0.3, 0.55, 0.75, 0.9, 1.0]) for _ in range(2000)]
    mean = statistics.fmean(scores)

    low, high = bootstrap_interval(scores)

    assert bootstrap_interval(scores) == (low, high)
    assert low < mean < high
    # Close to the normal approximation for this many scores.
    spread = 1.96 * statistics.pstdev(scores) / len(scores) ** 0.5
    assert low == pytest.approx(mean - spread, abs=0.01)
    assert high == pytest.approx(mean + spread, abs=0.01)


def test_the_bootstrap_of_one_value_is_that_value_and_of_nothing_is_nothing():
    assert bootstrap_interval([0.5, 0.5, 0.5]) == (0.5, 0.5)
    assert bootstrap_interval([]) is None


@pytest.mark.parametrize(("n", "p"), [(10_000, 0.3), (40, 0.1), (1000, 0.5), (25, 0.92)])
def test_binomial_draws_have_the_right_mean_and_variance(n, p):
    rng = random.Random(3)
    draws = [binomial(n, p, rng) for _ in range(4000)]

    assert statistics.fmean(draws) == pytest.approx(n * p, rel=0.03)
    assert statistics.variance(draws) == pytest.approx(n * p * (1 - p), rel=0.1)
    assert all(0 <= draw <= n for draw in draws)


def test_a_grouped_report_summarises_each_group_side_by_side():
    report = build_report(SAMPLE, OUTCOMES, KEYS, group_by="model")

    assert [(name, summary.count, summary.mean) for name, summary in report.groups] == [
        ("(none)", 1, 0.0),
        ("model-a", 2, 0.75),
        ("model-b", 2, 0.25),
    ]
    assert report.overall.count == 5


def test_agreement_is_reported_when_results_carry_judges_votes():
    judged = [
        Row(1.0, "pass", {"a": True}, None, {"a": {"1": True, "2": True}}),
        Row(0.0, "fail", {"a": False}, None, {"a": {"1": True, "2": False}, "b": {"1": True}}),
    ]

    assert summarize(judged, OUTCOMES, KEYS).agreement == [("a", 0.5, 2), ("b", None, 0)]
    assert summarize(SAMPLE, OUTCOMES, KEYS).agreement == []


# -- charts ------------------------------------------------------------------------------------


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg.strip())


def test_an_outcome_chart_is_an_accessible_svg_with_a_labelled_bar_per_outcome():
    chart = charts.outcome_chart(summarize(SAMPLE, OUTCOMES, KEYS), "outcomes")
    svg = parse(render_to_string("evaluation/charts/_hbars.html", {"chart": chart}))

    assert svg.get("role") == "img"
    assert svg.get("aria-labelledby") == "outcomes-title outcomes-desc"
    assert svg.find(f"{SVG}title").text == "Outcomes"
    assert svg.find(f"{SVG}desc").text == "Number of results per outcome, in rule order. pass: 3; fail: 2."
    groups = svg.findall(f"{SVG}g")
    assert [g.get("data-label") for g in groups] == ["pass", "fail"]
    assert [[t.text for t in g.findall(f"{SVG}text")] for g in groups] == [
        ["pass", "3 (60%)"],
        ["fail", "2 (40%)"],
    ]
    widths = [float(g.find(f"{SVG}rect").get("width")) for g in groups]
    assert widths[0] > widths[1] > 0


def test_a_pass_rate_chart_scales_bars_to_100_percent():
    chart = charts.pass_rate_chart(summarize(SAMPLE[:1], OUTCOMES, KEYS), "rates")
    svg = parse(render_to_string("evaluation/charts/_hbars.html", {"chart": chart}))

    bars = [float(rect.get("width")) for rect in svg.iter(f"{SVG}rect")]
    assert bars == [charts.WIDTH - charts.LABEL_WIDTH - charts.VALUE_WIDTH] * 2
    assert [t.text for t in svg.iter(f"{SVG}text")] == ["a", "100%", "b", "100%"]


def test_a_histogram_has_a_column_per_bin_with_its_count_and_range():
    chart = charts.histogram_chart(summarize(SAMPLE, OUTCOMES, KEYS), "histogram")
    svg = parse(render_to_string("evaluation/charts/_histogram.html", {"chart": chart}))

    columns = svg.findall(f"{SVG}g")
    assert len(columns) == 10
    assert [t.text for t in columns[5].findall(f"{SVG}text")] == ["2", "0.5-0.6"]
    assert float(columns[0].find(f"{SVG}rect").get("height")) == 140.0  # the tallest


def test_an_interval_chart_draws_each_groups_mean_between_its_bounds():
    report = build_report(SAMPLE, OUTCOMES, KEYS, group_by="model")
    chart = charts.interval_chart(report.groups, "means")
    svg = parse(render_to_string("evaluation/charts/_interval.html", {"chart": chart}))

    rows_ = svg.findall(f"{SVG}g")
    assert [g.get("data-label") for g in rows_] == ["(none)", "model-a", "model-b"]
    for group in rows_:
        line, dot = group.find(f"{SVG}line"), group.find(f"{SVG}circle")
        assert float(line.get("x1")) <= float(dot.get("cx")) <= float(line.get("x2"))
    assert rows_[1].findall(f"{SVG}text")[1].text.startswith("0.75 [")
    assert [t.text for t in svg.findall(f"{SVG}text")] == ["0", "0.25", "0.5", "0.75", "1"]


def test_chart_text_is_escaped():
    chart = charts.outcome_chart(summarize([Row(1.0, "<b>&", {}, None)], ["<b>&"], []), "x")
    svg = parse(render_to_string("evaluation/charts/_hbars.html", {"chart": chart}))

    assert svg.find(f"{SVG}g").find(f"{SVG}text").text == "<b>&"
