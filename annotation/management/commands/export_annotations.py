"""python manage.py export_annotations PROJECT --format potato|pairs|sft|ccpe|ccpe-hf [-o FILE]
[--status submitted|accepted|all|final] [--user U | --reference-only] [--include-reference]
[--include-gold]

A corpus's reference answers (``annotation.projects.references``) are not anyone's work: they are
left out unless ``--include-reference`` keeps them beside the annotators' answers, or
``--reference-only`` (formerly ``--gold``) writes them alone — the corpus's own spans, back in its
format. ``--status final`` writes each item's adjudicated answer, nobody's in particular.
"""

from __future__ import annotations

import gzip
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from annotation.exports import EXPORTS, REFERENCES, STATUSES, annotations_export
from annotation.models import Annotation, Project
from trees.audit import AuditedCommand
from trees.services import counted


class Command(AuditedCommand):
    help = "Write PROJECT's annotations to FILE (or standard output) as JSONL; a .gz name writes gzip."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project")
        parser.add_argument(
            "--format",
            required=True,
            choices=list(EXPORTS),
            dest="format_name",
            help="; ".join(f"{name}: {module.DESCRIPTION}" for name, module in EXPORTS.items()),
        )
        parser.add_argument("-o", "--output", default="-", help="output file; - for standard output")
        parser.add_argument(
            "--status",
            choices=list(STATUSES),
            default="submitted",
            help="; ".join(f"{name}: {selection.description}" for name, selection in STATUSES.items()),
        )
        who = parser.add_mutually_exclusive_group()
        who.add_argument("--user", "--annotator", help="only this annotator's answers (a username)")
        who.add_argument(
            "--reference-only",
            "--gold",
            action="store_true",
            dest="reference_only",
            help=f"{REFERENCES['only']}; --gold is its former name",
        )
        who.add_argument(
            "--include-reference",
            action="store_true",
            help=f"{REFERENCES['include']} (left out by default)",
        )
        parser.add_argument(
            "--include-gold",
            action="store_true",
            help="keep answers to gold items and gold or training answers (left out by default)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            project = Project.objects.get(name=options["project"])
        except Project.DoesNotExist:
            raise CommandError(f'no project named "{options["project"]}"', returncode=2) from None
        user = None
        final = options["status"] == "final"
        chosen = options["user"] is not None or options["reference_only"] or options["include_reference"]
        if final and chosen:
            raise CommandError(
                "--status final writes the items' final answers: leave out --user and the reference options",
                returncode=2,
            )
        if options["user"] is not None:
            User = get_user_model()
            try:
                user = User.objects.get(**{User.USERNAME_FIELD: options["user"]})
            except User.DoesNotExist:
                raise CommandError(f'no user named "{options["user"]}"', returncode=2) from None
        only = options["reference_only"]
        if only and not Annotation.objects.filter(project=project).references().exists():
            message = (
                f"no reference answers in {project.name}: no spans were imported with a corpus "
                "(a span scheme's import_spans)"
            )
            raise CommandError(message, returncode=2)
        reference = "only" if only else "include" if options["include_reference"] else "exclude"
        output = options["output"]
        format_options = {}
        if options["format_name"] in ("ccpe", "ccpe-hf"):
            # One annotator's dialogues (or the reference alone) are the plain corpus format;
            # several say whose each is.
            format_options = {"name_annotators": user is None and not only}
        lines = annotations_export(
            project=project,
            format_name=options["format_name"],
            status=options["status"],
            user=user,
            options=format_options,
            # The corpus's own spans cover every item, gold or not.
            include_gold=options["include_gold"] or only,
            reference=reference,
        )
        if output == "-":
            out = self.stdout._out
        elif output.endswith(".gz"):
            out = gzip.open(output, "wt", encoding="utf-8")  # noqa: SIM115
        else:
            try:
                out = open(output, "w", encoding="utf-8")  # noqa: SIM115
            except OSError as error:
                raise CommandError(f"cannot write {output}: {error.strerror}", returncode=2) from None
        count = 0
        try:
            for line in lines:
                out.write(line)
                # An empty JSON array (a ccpe export with nothing in it) holds no unit.
                count += line != "[]\n"
        finally:
            if output != "-":
                out.close()
        summary = f"exported {counted(count, EXPORTS[options['format_name']].UNIT)} of {project.name}"
        if output == "-":
            # Standard output holds the export: the summary goes to standard error.
            self.stderr.write(summary)
        else:
            self.stdout.write(f"{summary} to {output}")
