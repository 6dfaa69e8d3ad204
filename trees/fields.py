"""The JSON column every model uses: it reads back only storable text, and its admin form
refuses any other.

- Reading: SQLite keeps JSON as text, surrogates escaped, so versions before the checks
  at the boundaries could store a lone UTF-16 surrogate there (PostgreSQL never could).
  Such a character is replaced by U+FFFD as the row is read (``trees.storable``), so
  that a stored row cannot break a page, an API answer or an export.
- Writing through a form (the admin's JSON text areas): a value holding a NUL or a lone
  surrogate, or nesting deeper than ``BRANCHPOINT_MAX_JSON_DEPTH``, is refused on the
  form with its place, as the API refuses it in a body.

Migrations see Django's own ``JSONField``: the column is the same, only the Python side
differs, so swapping one for the other needs none.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from trees.storable import json_problems, may_hold_unstorable, repaired


class JSONFormField(forms.JSONField):
    """JSON typed into a form, refused (with each place) when it cannot be stored."""

    def to_python(self, value: Any) -> Any:
        data = super().to_python(value)
        if isinstance(value, str) and value:
            problems = json_problems(
                data,
                max_depth=settings.BRANCHPOINT_MAX_JSON_DEPTH,
                depth_setting="BRANCHPOINT_MAX_JSON_DEPTH",
            )
            if problems:
                raise ValidationError([str(problem) for problem in problems[:10]], code=problems[0].code)
        return data


class JSONField(models.JSONField):
    """``models.JSONField`` that mends what an older version stored and refuses, in forms,
    what cannot be stored."""

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        decoded = super().from_db_value(value, expression, connection)
        if isinstance(value, str) and may_hold_unstorable(value):
            return repaired(decoded)
        return decoded

    def formfield(self, **kwargs: Any) -> Any:
        return super().formfield(**{"form_class": JSONFormField, **kwargs})

    def deconstruct(self) -> tuple[str, str, list[Any], dict[str, Any]]:
        name, _, args, kwargs = super().deconstruct()
        return name, "django.db.models.JSONField", args, kwargs
