"""Model judges against people: a judge's answers measured beside the agreement between people.

A judge (``evaluation.llm``) answers as an account of its own, ``judge:<name>``, with
``source = model``; ``evaluation.agreement.project`` sets those coders apart, so the
agreement between people counts people only, and this module measures each judge
against them, per field that has a per-pair measure (``figures.PAIR_MEASURES``; the
field's first one: Cohen's κ for labels, quadratically weighted on ordinal scales,
span F1 exact for spans):

- the measure between the judge and each person, over the units both answered;
- their mean over the people (each person weighs the same);
- the people's range: the lowest and highest of the measure between two people, and
  where the judge's mean falls — ``below``, ``within`` or ``above`` it
  (``within_human_range`` is true for ``within``; a judge above the range agrees with
  people more than they agree with each other);
- for labels (nominal and ordinal fields), the judge's agreement with the people's
  majority and its confusion table (``evaluation.agreement.majority``: at least two
  people per unit, ties left out and counted);
- the matrix of the measure between every two coders, people then judges, each coder
  with its source (``human`` or ``model``): the shape of PandaLM's table of Cohen's κ
  among three annotators with the model against each (none beyond ``MATRIX_MAX_CODERS``).

Plain data in, plain JSON data out, no ORM. Each field's figures gain, when some judge
answered it::

    "judges": {"measure": "Cohen's kappa", "human_range": {"low": 0.41, "high": 0.66, "pairs": 3},
               "judges": [{"judge": "judge:pairs", "n_units": 40,
                           "humans": [{"human": "ann", "value": 0.52, "shown": "0.520", "n_units": 40, ...}],
                           "mean": {"measure": "Cohen's kappa (mean over people)", "value": 0.5, ...},
                           "position": "within", "within_human_range": true,
                           "majority": {"measure": "agreement with the human majority", "value": 0.8,
                                        "n_units": 38, "n_agreed": 30, "n_ties": 2, "n_too_few": 0,
                                        "labels": ["Better", "Same", "Worse"], "confusion": [[..], ..]}}],
               "matrix": {"measure": "Cohen's kappa", "coders": [{"coder": "ann", "source": "human"}, ...],
                          "rows": [[null, {"value": 0.6, "shown": "0.600", "n_units": 40}, ...], ...]}}
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from typing import Any

from evaluation.agreement import Agreement, mean_over_pairs
from evaluation.agreement.fields import NOMINAL, ORDINAL, Field
from evaluation.agreement.figures import PAIR_MEASURES, Pair, PairMeasure, annotator_pairs
from evaluation.agreement.majority import against_majority, majority_labels

HUMAN, MODEL = "human", "model"
BELOW, WITHIN, ABOVE = "below", "within", "above"
# Beyond this many coders a matrix is unreadable (the agreement page's heatmaps stop there too).
MATRIX_MAX_CODERS = 30


def judges_field_figures(field: Field, judges: Collection[str], human_pairs: Sequence[dict[str, Any]]) -> Any:
    """The judges' figures for one field (``field`` read from people's and judges' answers together).

    ``human_pairs`` are the field's pairs of people as ``figures.field_figures`` gave
    them. None when no judge answered the field, or it has no per-pair measure.
    """
    measures = PAIR_MEASURES.get(field.values)
    answered = {coder for answers in field.data.values() for coder in answers}
    present = sorted(answered & set(judges))
    if not measures or not present or field.problem:
        return None
    measure = measures[0]
    humans = sorted(answered - set(judges))
    people = [pair for pair in human_pairs if pair["measure"] == measure.name]
    known = [pair["value"] for pair in people if pair["value"] is not None]
    human_range = {"low": min(known), "high": max(known), "pairs": len(known)} if known else None
    pairs = [pair for pair in annotator_pairs(field) if pair[0] in judges or pair[1] in judges]
    results = _pair_results(measure, field, pairs)
    return {
        "measure": measure.name,
        "human_range": human_range,
        "judges": [_judge(field, judge, humans, results, human_range, measure.name) for judge in present],
        "matrix": _matrix(humans, present, people, results, measure.name),
    }


def _pair_results(measure: PairMeasure, field: Field, pairs: list[Pair]) -> dict[Pair, Agreement]:
    if not pairs:
        return {}
    try:
        return measure.compute(field, pairs)
    except (ValueError, TypeError) as error:
        reason = f"cannot be computed on these answers ({error})"
        return {pair: Agreement.undefined(measure.name, reason) for pair in pairs}


def _result(results: dict[Pair, Agreement], first: str, second: str) -> Agreement | None:
    return results.get((first, second)) or results.get((second, first))


def _judge(
    field: Field,
    judge: str,
    humans: list[str],
    results: dict[Pair, Agreement],
    human_range: dict[str, Any] | None,
    measure: str,
) -> dict[str, Any]:
    against = {human: found for human in humans if (found := _result(results, judge, human)) is not None}
    judged = [unit for unit, answers in field.data.items() if judge in answers]
    mean = mean_over_pairs(
        f"{measure} (mean over people)",
        {(judge, human): result for human, result in against.items()},
        n_units=len(judged),
        n_coders=len(against) + 1,
    )
    position = None
    if human_range is not None and mean.value is not None:
        value = round(mean.value, 12)  # a κ equal to a person's, up to rounding, is within
        position = BELOW if value < human_range["low"] else ABOVE if value > human_range["high"] else WITHIN
    figures: dict[str, Any] = {
        "judge": judge,
        "n_units": len(judged),
        "humans": [_human(human, result) for human, result in against.items()],
        "mean": mean.as_dict(),
        "position": position,
        "within_human_range": None if position is None else position == WITHIN,
        "majority": None,
    }
    if field.values in (NOMINAL, ORDINAL):
        majorities = majority_labels(field.data, set(humans))
        figures["majority"] = against_majority(field.data, judge, majorities, _categories(field)).as_dict()
    return figures


def _categories(field: Field) -> list[Hashable]:
    """The field's labels in order; yes before no for yes-or-no answers (rubric criteria)."""
    if field.order:
        return list(field.order)
    values = {value for answers in field.data.values() for value in answers.values()}
    return [True, False] if values and all(isinstance(value, bool) for value in values) else []


def _human(human: str, result: Agreement) -> dict[str, Any]:
    return {
        "human": human,
        "measure": result.measure,
        "value": result.value,
        "undefined_reason": result.undefined_reason,
        "shown": str(result),
        "n_units": result.n_units,
    }


def _matrix(
    humans: list[str],
    judges: list[str],
    people: Sequence[dict[str, Any]],
    results: dict[Pair, Agreement],
    measure: str,
) -> dict[str, Any] | None:
    """Every two coders' measure, people first then judges; a cell is None on the diagonal and
    for two coders with no unit in common."""
    coders = humans + judges
    if len(coders) > MATRIX_MAX_CODERS:
        return None
    cells: dict[Pair, dict[str, Any]] = {}
    for pair in people:
        cells[pair["a"], pair["b"]] = cells[pair["b"], pair["a"]] = _cell(pair)
    for (first, second), result in results.items():
        cells[first, second] = cells[second, first] = _cell(_human(second, result))
    rows = [[None if a == b else cells.get((a, b)) for b in coders] for a in coders]
    sources = [{"coder": coder, "source": MODEL if coder in judges else HUMAN} for coder in coders]
    return {"measure": measure, "coders": sources, "rows": rows}


def _cell(pair: dict[str, Any]) -> dict[str, Any]:
    return {
        "value": pair["value"],
        "shown": pair["shown"],
        "undefined_reason": pair["undefined_reason"],
        "n_units": pair["n_units"],
    }
