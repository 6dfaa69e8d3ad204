"""Annotators against a reference: each annotator's answers measured against a corpus's own.

A corpus may bring its answers with it (CCPE's spans, ``annotation.projects.references``).
They are what the corpus says, not one more annotator: agreement between annotators
leaves them out (``evaluation.agreement.project``), and this module measures each
annotator against them instead — with the field's pair measure (``figures.PAIR_MEASURES``:
span F1 exact and by overlap, Cohen's kappa), over the units both answered, and
overall as the mean over annotators (each annotator weighs the same, as each pair
does in the inter-annotator mean).

Plain data in, plain JSON data out, no ORM: ``fields`` hold the annotators' and the
references' answers together (``evaluation.agreement.fields`` over both sets of
rows), and ``references`` names the coders that are references. Fields whose kind of
value has no pair measure (numbers, sets, rankings) are left out and said so in the
note. The figures, per scheme::

    {"references": ["ccpe-gold"], "annotations": 2, "note": "",
     "fields": [{"field": "spans", "unit": "item", "values": "spans", "n_items": 2,
                 "measures": [{"measure": "span F1 (exact)", "value": 0.62, ...}],   # mean over annotators
                 "annotators": [{"annotator": "alice", "reference": "ccpe-gold",
                                 "measure": "span F1 (exact)", "value": 0.7, "undefined_reason": null,
                                 "shown": "0.700", "n_units": 2}, ...]}]}
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from evaluation.agreement import Agreement, mean_over_pairs
from evaluation.agreement.fields import Field
from evaluation.agreement.figures import PAIR_MEASURES, Pair

NO_PAIR_MEASURE = "no measure compares one annotator with the reference for these answers"


def reference_figures(
    fields: Sequence[Field], references: Collection[str], annotations: int
) -> dict[str, Any]:
    """Each annotator against the reference, per field that has a pair measure (see the module's docstring).

    ``annotations`` is how many reference answers the fields were read from (reported as is).
    """
    found = [
        _field_figures(field, references)
        for field in fields
        if field.values in PAIR_MEASURES and not field.problem
    ]
    note = "" if found else NO_PAIR_MEASURE
    return {"references": sorted(references), "annotations": annotations, "note": note, "fields": found}


def reference_pairs(field: Field, references: Collection[str]) -> list[Pair]:
    """``(annotator, reference)`` for each annotator who answered a unit the reference answered."""
    pairs = set()
    for answers in field.data.values():
        found = [reference for reference in references if reference in answers]
        if not found:
            continue
        pairs.update(
            (annotator, reference)
            for annotator in answers
            if annotator not in references
            for reference in found
        )
    return sorted(pairs)


def _field_figures(field: Field, references: Collection[str]) -> dict[str, Any]:
    pairs = reference_pairs(field, references)
    referenced = [
        (unit, answers)
        for unit, answers in field.data.items()
        if any(reference in answers for reference in references)
    ]
    # Units the reference and some annotator answered; the others only the reference has, so far.
    compared = [unit for unit, answers in referenced if any(coder not in references for coder in answers)]
    annotators = len({annotator for annotator, _ in pairs})
    figures: dict[str, Any] = {
        "field": field.name,
        "unit": field.unit,
        "values": field.values,
        "n_items": len({unit[0] for unit in compared}),
        "n_units": len(compared),
        "n_annotators": annotators,
        "measures": [],
        "annotators": [],
    }
    counts = {"n_units": len(compared), "n_coders": annotators, "n_dropped": len(referenced) - len(compared)}
    for measure in PAIR_MEASURES[field.values]:
        if not pairs:
            reason = "no annotator has answered a unit the reference answered"
            figures["measures"].append(Agreement.undefined(measure.name, reason, **counts).as_dict())
            continue
        results = _compared(measure.name, lambda m=measure: m.compute(field, pairs), pairs)
        figures["measures"].append(mean_over_pairs(measure.name, results, **counts).as_dict())
        figures["annotators"] += [_annotator(pair, result) for pair, result in results.items()]
    return figures


def _compared(
    name: str, compute: Callable[[], dict[Pair, Agreement]], pairs: list[Pair]
) -> dict[Pair, Agreement]:
    """The pairs' results, or each undefined with the reason when the answers cannot be measured."""
    try:
        results: dict[Pair, Agreement] = compute()
    except (ValueError, TypeError) as error:
        reason = f"cannot be computed on these answers ({error})"
        return {pair: Agreement.undefined(name, reason) for pair in pairs}
    return results


def _annotator(pair: Pair, result: Agreement) -> dict[str, Any]:
    return {
        "annotator": pair[0],
        "reference": pair[1],
        "measure": result.measure,
        "value": result.value,
        "undefined_reason": result.undefined_reason,
        "shown": str(result),
        "n_units": result.n_units,
    }
