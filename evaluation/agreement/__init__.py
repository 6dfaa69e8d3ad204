"""Agreement between annotators: pure functions over plain data, no ORM.

Every measure reads reliability data, ``unit → {coder: value}`` (see
``reliability``), and returns an ``Agreement``: a value, or "undefined" with
the reason — never NaN. Which measure fits which scheme:

- radio, labels, rubric criteria, branch-comparison pair labels
  (``comparisons``): alpha nominal, Fleiss' κ, Cohen's κ per pair, percent
  agreement;
- likert: alpha ordinal; Cohen's κ with linear or quadratic weights;
- number, slider, Open-Assistant's scales: alpha interval;
- multiselect, a selected path as its node set: alpha set (Jaccard distance);
- span: span F1, exact and overlap, per pair and averaged;
- sibling rankings: Kendall's W, Kendall's τ-b.

Modules: ``alpha`` (Krippendorff's alpha and its distances), ``kappa`` (Cohen,
Fleiss, percent agreement), ``spans``, ``comparisons`` (pair labels as
units), ``rankings``, ``result`` (the ``Agreement`` value), ``reliability``
(the data shape and its builders), ``majority`` (one coder against the others'
majority label, with its confusion table). Importing this package imports only them:
the measures need no Django (``tests/test_layout.py`` checks it).

The project glue sits beside them and is imported by name: ``fields`` (a
scheme's answers as reliability data), ``figures`` (the measures that fit
each field), ``project`` (a project's judgements read, measured and kept in an
``AgreementSnapshot``), ``judges`` (model judges measured against the people)
and ``charts`` (the agreement page's SVG geometry).
"""

from evaluation.agreement.alpha import DISTANCES, coincidences, krippendorff_alpha, path_node_set
from evaluation.agreement.comparisons import PairJudgement, comparison_units, mirror_from_order
from evaluation.agreement.kappa import (
    cohen_kappa,
    cohen_kappa_pairs,
    fleiss_kappa,
    fleiss_kappa_from_counts,
    percent_agreement,
)
from evaluation.agreement.rankings import (
    RANKING_MEASURES,
    kendall_tau_b,
    kendall_tau_b_pairs,
    kendall_w,
    mean_kendall_tau_b,
    ranking_agreement,
)
from evaluation.agreement.reliability import (
    ReliabilityData,
    coders_in,
    reliability_from_lists,
    reliability_from_records,
)
from evaluation.agreement.result import Agreement, mean_over_pairs
from evaluation.agreement.spans import Span, span_agreement, span_f1, span_f1_pairs

__all__ = [
    "DISTANCES",
    "RANKING_MEASURES",
    "Agreement",
    "PairJudgement",
    "ReliabilityData",
    "Span",
    "coders_in",
    "cohen_kappa",
    "cohen_kappa_pairs",
    "coincidences",
    "comparison_units",
    "fleiss_kappa",
    "fleiss_kappa_from_counts",
    "kendall_tau_b",
    "kendall_tau_b_pairs",
    "kendall_w",
    "krippendorff_alpha",
    "mean_kendall_tau_b",
    "mean_over_pairs",
    "mirror_from_order",
    "path_node_set",
    "percent_agreement",
    "ranking_agreement",
    "reliability_from_lists",
    "reliability_from_records",
    "span_agreement",
    "span_f1",
    "span_f1_pairs",
]
