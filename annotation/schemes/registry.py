"""The annotation types Branchpoint knows, by ``annotation_type``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from annotation.schemes.base import Scheme

SCHEMES: dict[str, type[Scheme]] = {}


def register(cls: type[Scheme]) -> type[Scheme]:
    SCHEMES[cls.annotation_type] = cls
    return cls
