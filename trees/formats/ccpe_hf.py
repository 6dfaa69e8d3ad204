"""CCPE in the Hugging Face layout (see ``trees.formats.ccpe``): enums as integers,
lists stored as columns, written as JSONL, one dialogue a line.

Reading takes either CCPE layout, like ``ccpe`` itself; only the writer differs.
"""

from trees.formats.ccpe import read, write_hf
from trees.formats.records import JSONL

NAME = "ccpe-hf"
FILE = JSONL
write = write_hf

__all__ = ["NAME", "read", "write"]
