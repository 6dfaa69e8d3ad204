"""The measures that fit each kind of field, and a field's figures as plain JSON data.

Which measures (``MEASURES``) and which per-pair measure (``PAIR_MEASURES``)
a field gets depends only on its kind of value:

- nominal (labels, yes/no, pair labels): Krippendorff's alpha (nominal),
  Fleiss' κ, percent agreement; Cohen's κ per pair of annotators;
- ordinal (likert, multirate): alpha (ordinal, over the scale's order),
  percent agreement; Cohen's κ with quadratic weights per pair;
- interval (number, slider, Open-Assistant's scales): alpha (interval);
- set (multiselect, selected paths): alpha with the Jaccard distance,
  percent agreement (the same set exactly);
- spans: span F1, exact and overlap, averaged over pairs and per pair;
- rankings: Kendall's W and mean Kendall's τ-b, averaged over decision points.

Pairs are the annotators who answered at least one unit in common (so a
project with many annotators and little overlap does not list thousands of
empty pairs). A measure that cannot be computed on the answers (a label
outside the configured scale after a config change, say) is "undefined" with
the reason, like any measure without enough data: figures never fail.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import partial
from itertools import combinations
from typing import Any

from evaluation.agreement import (
    Agreement,
    cohen_kappa_pairs,
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
    ranking_agreement,
    span_agreement,
    span_f1_pairs,
)
from evaluation.agreement.fields import INTERVAL, NOMINAL, ORDINAL, RANKINGS, SET, SPANS, Field

Pair = tuple[str, str]


@dataclass(frozen=True)
class Measure:
    name: str  # as the result names it: shown when the measure fails before naming itself
    compute: Callable[[Field], Agreement]


@dataclass(frozen=True)
class PairMeasure:
    name: str
    compute: Callable[[Field, list[Pair]], dict[Pair, Agreement]]


def _categories(field: Field) -> list[Hashable]:
    """The field's order, then any value outside it (sorted when they sort), for weights and ranks."""
    order = list(field.order or ())
    known = set(order)
    extra = {value for answers in field.data.values() for value in answers.values()} - known
    try:
        return order + sorted(extra)
    except TypeError:
        return order + list(extra)


def _alpha(metric: str, field: Field) -> Agreement:
    order = _categories(field) if metric == ORDINAL else None
    return krippendorff_alpha(field.data, metric, order=order)


def _cohen(weights: str | None, field: Field, pairs: list[Pair]) -> dict[Pair, Agreement]:
    categories = _categories(field) if weights else None
    return cohen_kappa_pairs(field.data, weights=weights, categories=categories, pairs=pairs)


def _span_pairs(match: str, field: Field, pairs: list[Pair]) -> dict[Pair, Agreement]:
    return span_f1_pairs(field.data, match=match, pairs=pairs)


MEASURES: dict[str, list[Measure]] = {
    NOMINAL: [
        Measure("Krippendorff's alpha (nominal)", partial(_alpha, "nominal")),
        Measure("Fleiss' kappa", lambda field: fleiss_kappa(field.data)),
        Measure("percent agreement", lambda field: percent_agreement(field.data)),
    ],
    ORDINAL: [
        Measure("Krippendorff's alpha (ordinal)", partial(_alpha, ORDINAL)),
        Measure("percent agreement", lambda field: percent_agreement(field.data)),
    ],
    INTERVAL: [Measure("Krippendorff's alpha (interval)", partial(_alpha, INTERVAL))],
    SET: [
        Measure("Krippendorff's alpha (set)", partial(_alpha, SET)),
        Measure("percent agreement", lambda field: percent_agreement(field.data)),
    ],
    SPANS: [
        Measure("span F1 (exact)", lambda field: span_agreement(field.data, match="exact")),
        Measure("span F1 (overlap)", lambda field: span_agreement(field.data, match="overlap")),
    ],
    RANKINGS: [
        Measure("Kendall's W (mean over units)", lambda field: ranking_agreement(field.data, "kendall_w")),
        Measure(
            "Kendall's tau-b (mean over pairs, then units)",
            lambda field: ranking_agreement(field.data, "kendall_tau_b"),
        ),
    ],
}

PAIR_MEASURES: dict[str, list[PairMeasure]] = {
    NOMINAL: [PairMeasure("Cohen's kappa", partial(_cohen, None))],
    ORDINAL: [PairMeasure("Cohen's kappa (quadratic weights)", partial(_cohen, "quadratic"))],
    SPANS: [
        PairMeasure("span F1 (exact)", partial(_span_pairs, "exact")),
        PairMeasure("span F1 (overlap)", partial(_span_pairs, "overlap")),
    ],
}


def annotator_pairs(field: Field) -> list[Pair]:
    """The pairs of annotators (each sorted, the list sorted) who answered some unit in common."""
    # Units are answered by the same few groups of annotators: pair up each group once.
    groups = {frozenset(answers) for answers in field.data.values() if len(answers) > 1}
    return sorted({pair for group in groups for pair in combinations(sorted(group), 2)})


def field_figures(field: Field) -> dict[str, Any]:
    """A field's figures: its counts, each measure's result, and each pair's (as plain JSON data)."""
    annotators = {annotator for answers in field.data.values() for annotator in answers}
    figures: dict[str, Any] = {
        "field": field.name,
        "unit": field.unit,
        "values": field.values,
        "n_items": field.n_items,
        "n_units": len(field.data),
        "n_annotators": len(annotators),
        "measures": [],
        "pairs": [],
    }
    for measure in MEASURES[field.values]:
        figures["measures"].append(
            _measured(measure.name, lambda m=measure: m.compute(field), field).as_dict()
        )
    pairs = annotator_pairs(field)
    for measure in PAIR_MEASURES.get(field.values, []):
        if field.problem or not pairs:
            continue
        try:
            results = measure.compute(field, pairs)
        except (ValueError, TypeError) as error:
            reason = _cannot(error)
            results = {pair: Agreement.undefined(measure.name, reason) for pair in pairs}
        figures["pairs"] += [_pair(pair, result) for pair, result in results.items()]
    return figures


def _measured(name: str, compute: Callable[[], Agreement], field: Field) -> Agreement:
    if field.problem:
        return Agreement.undefined(name, field.problem)
    try:
        return compute()
    except (ValueError, TypeError) as error:
        return Agreement.undefined(name, _cannot(error))


def _cannot(error: Exception) -> str:
    return f"cannot be computed on these answers ({error})"


def _pair(pair: Pair, result: Agreement) -> dict[str, Any]:
    return {
        "a": pair[0],
        "b": pair[1],
        "measure": result.measure,
        "value": result.value,
        "undefined_reason": result.undefined_reason,
        "shown": str(result),
        "n_units": result.n_units,
    }
