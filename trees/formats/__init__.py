"""Tree file formats: each module reads a text stream into ``TreeRecord``
objects and writes records back out, in pieces, without touching the ORM.

Adding a format is adding a module with ``NAME``, ``read`` and ``write`` and
listing it here.
"""

from __future__ import annotations

from types import ModuleType

from trees.formats import ccpe, ccpe_hf, dialogue_csv, flat, oasst, oasst_messages, potato

FORMATS: dict[str, ModuleType] = {
    module.NAME: module for module in (potato, oasst, oasst_messages, flat, ccpe, ccpe_hf, dialogue_csv)
}


def get_format(name: str) -> ModuleType:
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f'unknown format "{name}" (expected one of {", ".join(FORMATS)})') from None
