"""CCPE dialogues in the Hugging Face layout, one per line (see ``annotation.exports.ccpe``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from annotation.exports.ccpe import dialogues
from annotation.exports.rows import ItemAnnotations
from annotation.projects.config import ProjectConfig
from trees.formats import ccpe
from trees.formats.records import JSONL

NAME = "ccpe-hf"
FILE = JSONL
UNIT = "dialogue"
NEEDS_TEXT = False
NEEDS_RECORDS = True
DESCRIPTION = "CCPE dialogues in the Hugging Face layout (JSONL) with each annotator's spans as segments"


def write(
    items: Iterable[ItemAnnotations], config: ProjectConfig, *, name_annotators: bool = True
) -> Iterator[str]:
    for text in dialogues(items, config, layout=ccpe.HF, name_annotators=name_annotators):
        yield text + "\n"
