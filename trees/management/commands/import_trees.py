"""python manage.py import_trees DATASET FILE --format potato|oasst|oasst-messages|flat|ccpe|ccpe-hf|csv

oasst-messages files are JSONL or Parquet: by --layout, else by the file's name
(.parquet), else by its first bytes.

CSV files name their columns with --dialog-column, --index-column,
--speaker-column and --text-column, and add speakers to the speaker table
with --speaker VALUE=ROLE (repeatable)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser
from django.db import transaction

from trees import vocabulary
from trees.audit import AuditedCommand
from trees.formats import FORMATS, oasst_messages
from trees.management.progress import ProgressBar
from trees.services import dataset_get_or_create, tree_import
from trees.validation import ImportLimits


class Command(AuditedCommand):
    help = (
        "Import conversation trees from FILE into DATASET (created if new). All or nothing: "
        "on any bad item nothing is imported and every problem is listed (exit code 2)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dataset", help="dataset name (created if it does not exist)")
        parser.add_argument("file", help="input file (.gz is read as gzip); - for standard input")
        parser.add_argument("--format", required=True, choices=sorted(FORMATS), dest="format_name")
        parser.add_argument("--id-key", default="id", help="potato: the item id key (default: id)")
        parser.add_argument("--tree-key", default="tree", help="potato: the tree key (default: tree)")
        parser.add_argument(
            "--layout",
            choices=oasst_messages.LAYOUTS,
            help="oasst-messages: JSONL or Parquet (default: by the file's name, .parquet, "
            "else by its first bytes)",
        )
        add_csv_arguments(parser)
        parser.add_argument(
            "--speaker",
            action="append",
            default=[],
            metavar="VALUE=ROLE",
            help="csv: read this speaker value as this role (user, assistant, system); repeatable, "
            "added to the defaults USER/ASSISTANT, user/assistant, human/bot",
        )
        parser.add_argument(
            "--skip-invalid", action="store_true", help="import the good items and list the bad ones"
        )
        parser.add_argument("--replace", action="store_true", help="replace items whose id the dataset has")
        parser.add_argument("--max-text-chars", type=int, help="longest message text accepted")
        parser.add_argument("--max-depth", type=int, help="most levels a tree may have")
        parser.add_argument("--max-nodes", type=int, help="most messages a tree may have")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        if options["layout"] and options["format_name"] != oasst_messages.NAME:
            raise CommandError(f"--layout is for --format {oasst_messages.NAME}", returncode=2)
        try:
            source = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error.strerror}", returncode=2) from None
        total = None if path == "-" else os.path.getsize(path)
        progress = ProgressBar(self.stderr._out, total=total, unit="item")
        limits = ImportLimits.from_settings(
            max_text_chars=options["max_text_chars"],
            max_depth=options["max_depth"],
            max_nodes=options["max_nodes"],
        )
        format_options = {}
        if options["format_name"] == "potato":
            format_options = {"id_key": options["id_key"], "tree_key": options["tree_key"]}
        elif options["format_name"] == "csv":
            format_options = csv_options(options) | {"speakers": speaker_entries(options["speaker"])}
        elif options["format_name"] == oasst_messages.NAME:
            # A name ending in .parquet says Parquet; other files are told by their first bytes.
            parquet = oasst_messages.layout_of(path) == oasst_messages.PARQUET_LAYOUT
            layout = options["layout"] or (oasst_messages.PARQUET_LAYOUT if parquet else None)
            format_options = {"layout": layout}
        # A new dataset is only kept if the import is.
        with source, transaction.atomic():
            try:
                dataset = dataset_get_or_create(options["dataset"])
            except ValidationError as error:
                raise CommandError(
                    f'dataset name "{options["dataset"]}": {" ".join(error.messages)}', returncode=2
                ) from None
            report = tree_import(
                dataset=dataset,
                source=source,
                format_name=options["format_name"],
                options=format_options,
                skip_invalid=options["skip_invalid"],
                replace=options["replace"],
                limits=limits,
                progress=progress.update,
            )
            if not report.committed:
                transaction.set_rollback(True)
        progress.finish()
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), indent=2))
        else:
            for issue in report.errors:
                self.stderr.write(str(issue))
            if report.errors_not_shown:
                self.stderr.write(f"... and {report.errors_not_shown:,} more")
        if not report.committed:
            raise CommandError(report.summary(), returncode=2)
        if not options["json"]:
            self.stdout.write(report.summary())


def add_csv_arguments(parser: CommandParser) -> None:
    """The csv format's column options, shared by import_trees and export_trees."""
    for option, default, what in (
        ("--dialog-column", "dialog_id", "the dialogue id"),
        ("--index-column", "utterance_index", "the utterance's index in its dialogue"),
        ("--speaker-column", "speaker", "the speaker"),
        ("--text-column", "text", "the utterance's text"),
    ):
        parser.add_argument(option, default=default, help=f"csv: the column of {what} (default: {default})")


def csv_options(options: dict[str, Any]) -> dict[str, str]:
    return {key: options[key] for key in ("dialog_column", "index_column", "speaker_column", "text_column")}


def speaker_entries(entries: list[str]) -> dict[str, str]:
    """``--speaker VALUE=ROLE`` entries as a table of value: role; raises CommandError on a bad one."""
    table = {}
    for entry in entries:
        value, equals, role = entry.rpartition("=")
        canonical = vocabulary.normalize_role(role) if equals else None
        if not value or canonical is None:
            reason = (
                f'unknown role "{role}" (expected {vocabulary.describe_roles()})'
                if equals and value
                else "give it as VALUE=ROLE, e.g. narrator=system"
            )
            raise CommandError(f'--speaker "{entry}": {reason}', returncode=2)
        table[value] = canonical
    return table
