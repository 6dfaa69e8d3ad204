"""python manage.py agreement PROJECT [--json] [--scheme NAME]

Agreement between the project's annotators, per scheme and field: each
measure's value (or "undefined" and why), the items, units and annotators it
covers, and Cohen's kappa (or span F1) for each pair of annotators. The same
figures as the agreement page and the API, from the same kept snapshot
(recomputed when answers changed). ``--json`` prints them as JSON: per
scheme and field, each measure's value (null with ``undefined_reason`` when
undefined), n_items, n_units, n_annotators, and ``pairs``.

A corpus's reference answers are not an annotator: each annotator is measured
against them apart, printed under "against the reference" (in ``--json``,
each scheme's ``reference``). Nor are model judges: each is measured against
the people, printed under "judges against people" (in ``--json``, each
field's ``judges``).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.models import Project
from evaluation.agreement.project import agreement_current
from trees.audit import TextCommand

# Pairs printed per field in the table (all of them are in --json).
PAIRS_PRINTED = 20


class Command(TextCommand):
    """Reads only, so not audited; its arguments are checked all the same."""

    help = (
        "Agreement between PROJECT's annotators per scheme and field (Krippendorff's alpha, Fleiss' and "
        "Cohen's kappa, span F1, Kendall's W... as fits each scheme), with each pair of annotators; "
        "--json for machine-readable figures."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="the project whose annotators are compared")
        parser.add_argument("--json", action="store_true", help="print the figures as JSON")
        parser.add_argument("--scheme", help="only this scheme (by name)")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            project = Project.objects.get(name=options["project"])
        except Project.DoesNotExist:
            raise CommandError(f'no project named "{options["project"]}"', returncode=2) from None
        figures = agreement_current(project).figures
        wanted = options["scheme"]
        if wanted is not None:
            schemes = [scheme for scheme in figures["schemes"] if scheme["scheme"] == wanted]
            if not schemes:
                known = ", ".join(scheme["scheme"] for scheme in figures["schemes"]) or "none"
                raise CommandError(
                    f'project "{project.name}" has no scheme named "{wanted}" (its schemes: {known})',
                    returncode=2,
                )
            figures = {**figures, "schemes": schemes}
        if options["json"]:
            self.stdout.write(json.dumps(figures, indent=2, ensure_ascii=False))
            return
        self.stdout.write(self._table(figures))

    def _table(self, figures: dict[str, Any]) -> str:
        annotators = len(figures["annotators"])
        lines = [
            f"Agreement in {figures['project']}: {figures['annotations']:,} submitted answers by "
            f"{annotators:,} annotator{'' if annotators == 1 else 's'} (computed {figures['computed_at']})"
        ]
        for scheme in figures["schemes"]:
            lines += ["", f"{scheme['scheme']} ({scheme['type']}): {scheme['annotations']:,} answers"]
            if scheme["note"]:
                lines.append(f"  {scheme['note']}")
            for field in scheme["fields"]:
                counts = f"{field['n_items']:,} items, {field['n_units']:,} units"
                lines.append(
                    f"  {field['field']} ({field['values']}, per {field['unit']}): {counts}, "
                    f"{field['n_annotators']:,} annotators"
                )
                width = max(len(measure["measure"]) for measure in field["measures"])
                for measure in field["measures"]:
                    lines.append(
                        f"    {measure['measure']:<{width}}  {self._value(measure):>9}  "
                        f"{measure['n_units']:>8,} units  {measure['n_coders']:>4} annotators"
                        + self._why(measure)
                    )
                self._pairs(field["pairs"], lines)
                if field.get("judges"):
                    self._judges(field["judges"], lines)
            if scheme.get("reference"):
                self._reference(scheme["reference"], lines)
        return "\n".join(lines)

    def _reference(self, reference: dict[str, Any], lines: list[str]) -> None:
        names = ", ".join(reference["references"])
        answers = reference["annotations"]
        lines.append(
            f"  against the reference ({names}: {answers:,} answer{'' if answers == 1 else 's'}, "
            "not an annotator, not counted above)"
        )
        if reference["note"]:
            lines.append(f"    {reference['note']}")
        for field in reference["fields"]:
            lines.append(f"    {field['field']}: {field['n_items']:,} items compared")
            width = max(len(measure["measure"]) for measure in field["measures"])
            for measure in field["measures"]:
                lines.append(
                    f"      {measure['measure']:<{width}}  {self._value(measure):>9}  all annotators (mean)"
                    + self._why(measure)
                )
            named = max((len(result["annotator"]) for result in field["annotators"]), default=0)
            for result in field["annotators"][:PAIRS_PRINTED]:
                lines.append(
                    f"      {result['measure']:<{width}}  {self._value(result):>9}  "
                    f"{result['annotator']:<{named}}  {result['n_units']:>8,} units" + self._why(result)
                )
            if len(field["annotators"]) > PAIRS_PRINTED:
                more = len(field["annotators"]) - PAIRS_PRINTED
                lines.append(f"      ... and {more:,} more (see --json)")

    def _judges(self, judges: dict[str, Any], lines: list[str]) -> None:
        """Each judge against the people: its measure with each, their mean and range, the majority."""
        found = judges["human_range"]
        between = f"{found['low']:.3f} to {found['high']:.3f}" if found else "no value"
        lines.append(f"    judges against people ({judges['measure']}; between two people: {between}):")
        for judge in judges["judges"]:
            position = f" ({judge['position']} the people's range)" if judge["position"] else ""
            lines.append(f"      {judge['judge']}: mean {self._value(judge['mean'])}{position}")
            for human in judge["humans"][:PAIRS_PRINTED]:
                lines.append(
                    f"        with {human['human']}: {self._value(human)}  {human['n_units']:,} units"
                    + self._why(human)
                )
            majority = judge["majority"]
            if majority is not None:
                ties = majority["n_ties"]
                lines.append(
                    f"        with the majority: {self._value(majority)}  {majority['n_agreed']:,} of "
                    f"{majority['n_units']:,} units ({ties:,} tie{'' if ties == 1 else 's'} left out)"
                    + self._why(majority)
                )

    def _pairs(self, pairs: list[dict[str, Any]], lines: list[str]) -> None:
        if not pairs:
            return
        by_measure: dict[str, list[dict[str, Any]]] = {}
        for pair in pairs:
            by_measure.setdefault(pair["measure"], []).append(pair)
        for measure, found in by_measure.items():
            lines.append(f"    {measure} per pair:")
            width = max(len(pair["a"]) + len(pair["b"]) for pair in found) + 5
            for pair in found[:PAIRS_PRINTED]:
                names = f"{pair['a']} and {pair['b']}"
                lines.append(
                    f"      {names:<{width}}  {self._value(pair):>9}  {pair['n_units']:>8,} units"
                    + self._why(pair)
                )
            if len(found) > PAIRS_PRINTED:
                lines.append(f"      ... and {len(found) - PAIRS_PRINTED:,} more pairs (see --json)")

    @staticmethod
    def _value(result: dict[str, Any]) -> str:
        return "undefined" if result["value"] is None else result["shown"]

    @staticmethod
    def _why(result: dict[str, Any]) -> str:
        return f"  ({result['undefined_reason']})" if result["value"] is None else ""
