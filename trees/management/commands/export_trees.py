"""python manage.py export_trees DATASET --format potato|oasst|oasst-messages|flat|ccpe|ccpe-hf|csv [-o FILE]

oasst-messages writes JSONL, or Parquet in the Hugging Face hub's schema with
--layout parquet or an output name ending in .parquet."""

from __future__ import annotations

import gzip
from typing import IO, Any

from django.core.management.base import CommandError, CommandParser

from trees.audit import AuditedCommand
from trees.formats import FORMATS, oasst_messages, oasst_parquet
from trees.management.commands.import_trees import add_csv_arguments, csv_options
from trees.management.progress import ProgressBar
from trees.models import Dataset
from trees.services import counted, trees_export


class Command(AuditedCommand):
    help = "Write the trees of DATASET to FILE (or standard output); a .gz name writes gzip."
    LAYOUTS = {"potato": ("jsonl", "array"), oasst_messages.NAME: oasst_messages.LAYOUTS}

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dataset")
        parser.add_argument("--format", required=True, choices=sorted(FORMATS), dest="format_name")
        parser.add_argument("-o", "--output", default="-", help="output file; - for standard output")
        parser.add_argument("--id-key", default="id", help="potato: the item id key (default: id)")
        parser.add_argument("--tree-key", default="tree", help="potato: the tree key (default: tree)")
        parser.add_argument(
            "--layout",
            choices=["jsonl", "array", "parquet"],
            help="potato: JSONL (the default) or one JSON array; oasst-messages: JSONL or Parquet "
            "(default: Parquet for an output name ending in .parquet, else JSONL)",
        )
        add_csv_arguments(parser)

    def _open(self, output: str, *, binary: bool) -> IO[Any]:
        """Where the export goes: standard output, a file, or a gzip file (a .gz name)."""
        if output == "-":
            if not binary:
                return self.stdout._out
            stream = getattr(self.stdout._out, "buffer", None)
            if stream is None:
                raise CommandError("Parquet is bytes: write it to a file with -o NAME.parquet", returncode=2)
            return stream
        mode = "wb" if binary else "wt"
        if output.endswith(".gz"):
            return gzip.open(output, mode, **({} if binary else {"encoding": "utf-8"}))  # type: ignore[return-value]
        return open(output, mode, **({} if binary else {"encoding": "utf-8"}))

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            dataset = Dataset.objects.get(name=options["dataset"])
        except Dataset.DoesNotExist:
            raise CommandError(f'no dataset named "{options["dataset"]}"', returncode=2) from None
        format_name, output, layout = options["format_name"], options["output"], options["layout"]
        format_options: dict[str, Any] = {}
        if format_name == "potato":
            format_options = {
                "id_key": options["id_key"],
                "tree_key": options["tree_key"],
                "layout": layout or "jsonl",
            }
        elif format_name == "csv":
            format_options = csv_options(options)
        elif format_name == oasst_messages.NAME:
            layout = layout or (oasst_messages.layout_of(output) if output != "-" else None) or "jsonl"
            format_options = {"layout": layout}
        if layout and layout not in self.LAYOUTS.get(format_name, ()):
            raise CommandError(f"--layout {layout} is not a layout of --format {format_name}", returncode=2)
        binary = format_options.get("layout") == oasst_messages.PARQUET_LAYOUT
        if binary and not oasst_parquet.available():
            raise CommandError(oasst_parquet.MISSING_PYARROW, returncode=2)
        out = self._open(output, binary=binary)
        total = dataset.trees.count()
        progress = ProgressBar(self.stderr._out, total=total, unit="tree")
        count = 0
        try:
            for count, piece in enumerate(
                trees_export(dataset=dataset, format_name=format_name, options=format_options),
                start=1,
            ):
                out.write(piece)
                if not binary:  # a piece a tree (Parquet's are row groups)
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
