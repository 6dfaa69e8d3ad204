"""python manage.py export_trees DATASET --format potato|oasst|flat|ccpe|ccpe-hf|csv [-o FILE]"""

from __future__ import annotations

import gzip
from typing import Any

from django.core.management.base import CommandError, CommandParser

from trees.audit import AuditedCommand
from trees.formats import FORMATS
from trees.management.commands.import_trees import add_csv_arguments, csv_options
from trees.management.progress import ProgressBar
from trees.models import Dataset
from trees.services import counted, trees_export


class Command(AuditedCommand):
    help = "Write the trees of DATASET to FILE (or standard output); a .gz name writes gzip."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dataset")
        parser.add_argument("--format", required=True, choices=sorted(FORMATS), dest="format_name")
        parser.add_argument("-o", "--output", default="-", help="output file; - for standard output")
        parser.add_argument("--id-key", default="id", help="potato: the item id key (default: id)")
        parser.add_argument("--tree-key", default="tree", help="potato: the tree key (default: tree)")
        parser.add_argument(
            "--layout", choices=["jsonl", "array"], default="jsonl", help="potato: JSONL or one JSON array"
        )
        add_csv_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            dataset = Dataset.objects.get(name=options["dataset"])
        except Dataset.DoesNotExist:
            raise CommandError(f'no dataset named "{options["dataset"]}"', returncode=2) from None
        format_options = {}
        if options["format_name"] == "potato":
            format_options = {
                "id_key": options["id_key"],
                "tree_key": options["tree_key"],
                "layout": options["layout"],
            }
        elif options["format_name"] == "csv":
            format_options = csv_options(options)
        output = options["output"]
        if output == "-":
            out = self.stdout._out
        elif output.endswith(".gz"):
            out = gzip.open(output, "wt", encoding="utf-8")  # noqa: SIM115
        else:
            out = open(output, "w", encoding="utf-8")  # noqa: SIM115
        total = dataset.trees.count()
        progress = ProgressBar(self.stderr._out, total=total, unit="tree")
        count = 0
        try:
            for count, piece in enumerate(
                trees_export(dataset=dataset, format_name=options["format_name"], options=format_options),
                start=1,
            ):
                out.write(piece)
                progress.update(count, count)
        finally:
            if output != "-":
                out.close()
        progress.finish()
        if output == "-":
            # Standard output holds the trees: the summary goes beside the progress bar.
            self.stderr.write(f"exported {counted(total, 'tree')} of {dataset.name}")
        else:
            self.stdout.write(f"exported {counted(total, 'tree')} of {dataset.name} to {output}")
