"""The signed-in user kept with their session for a moment, per process.

Every page request reads its session and then the user it names from the database: on the
annotator's loop those two reads were about a quarter of a worker's CPU (issue 21). Sessions
come from the cache (``SESSION_ENGINE = cached_db``); this backend keeps the user as well, by
user id, for ``settings.API_AUTH_CACHE_SECONDS`` (as the API keeps a token's user:
``annotation.recent``). Django still checks the session's hash of the password against the
kept user on every request, and this process forgets a user as soon as it saves them, so a
password change or a deactivation here logs them out at once; in other processes, within
those seconds.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models.signals import post_delete, post_save

from annotation.recent import Recent
from trees import sql

_kept: Recent[Any, Any] = Recent()


class KeptUserBackend(ModelBackend):
    """Django's ModelBackend, whose ``get_user`` (the session's user) reads each user at most
    once per ``API_AUTH_CACHE_SECONDS`` in this process, in one statement written out
    (``trees.sql``: a third of the ORM's CPU for the same row)."""

    def get_user(self, user_id: Any) -> Any:
        user = _kept.get(user_id)
        if user is None:
            user = _user_read(user_id)
            if user is not None:
                _kept.keep(user_id, user)
        # As ModelBackend's: an inactive user is signed out.
        return user if user is not None and self.user_can_authenticate(user) else None


def _user_read(user_id: Any) -> Any:
    model = get_user_model()
    try:
        key = model._meta.pk.to_python(user_id)
    except ValidationError:
        return None
    columns = sql.columns(model, "person")
    key_column = connection.ops.quote_name(model._meta.pk.column)
    row = sql.fetch_one(
        f"SELECT {columns.sql} FROM {sql.table(model)} person WHERE person.{key_column} = %s", [key]
    )
    return None if row is None else columns.load(row)


def _forget(sender: Any, instance: Any, **kwargs: Any) -> None:
    _kept.forget(instance.pk)


post_save.connect(_forget, sender=get_user_model(), dispatch_uid="session_users_forget_saved")
post_delete.connect(_forget, sender=get_user_model(), dispatch_uid="session_users_forget_deleted")
