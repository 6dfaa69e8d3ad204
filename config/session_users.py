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
from django.db.models.signals import post_delete, post_save

from annotation.recent import Recent

_kept: Recent[Any, Any] = Recent()


class KeptUserBackend(ModelBackend):
    """Django's ModelBackend, whose ``get_user`` (the session's user) reads each user at most
    once per ``API_AUTH_CACHE_SECONDS`` in this process."""

    def get_user(self, user_id: Any) -> Any:
        user = _kept.get(user_id)
        if user is None:
            user = super().get_user(user_id)
            if user is not None:
                _kept.keep(user_id, user)
        return user


def _forget(sender: Any, instance: Any, **kwargs: Any) -> None:
    _kept.forget(instance.pk)


post_save.connect(_forget, sender=get_user_model(), dispatch_uid="session_users_forget_saved")
post_delete.connect(_forget, sender=get_user_model(), dispatch_uid="session_users_forget_deleted")
