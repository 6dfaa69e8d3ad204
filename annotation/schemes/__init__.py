"""Annotation schemes: one module per ``annotation_type``, registered by name.

Importing this package registers every type; adding a type is adding a
module here and importing it below.
"""

from annotation.schemes import choice, likert, multirate, numeric, span, text, tree  # noqa: F401
from annotation.schemes.base import Scheme
from annotation.schemes.registry import SCHEMES

__all__ = ["SCHEMES", "Scheme"]
