"""Usernames that look alike cannot belong to two accounts.

Django compares usernames as they are spelled, so ``root``, ``Root`` and ``r\\u043e\\u043et`` (its
o's Cyrillic) could each be a different person — and look like one in every list, audit
entry and export. Each account's username has a key (``username_key``): the name case
folded, NFKC-normalised and reduced to its Unicode TR39 confusables skeleton
(``disarm.skeleton_key``), so look-alikes share it. The keys are stored, one per account,
under a unique index (``UsernameKey``), kept by the receivers of every save of a user
(``annotation.receivers``): the database refuses a second account with a taken key,
whichever way it is made. The admin's user forms, ``createsuperuser`` and annotation
imports ask ``username_check`` first, so people get the reason rather than an error.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from disarm import skeleton_key
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError

from annotation.models import UsernameKey


def username_key(username: str) -> str:
    """What ``username`` looks like: the same key for names told apart only by case, width or
    look-alike characters."""
    return skeleton_key(username)


def username_look_alike(username: str, *, exclude: int | None = None) -> str | None:
    """The username of another account (not ``exclude``'s) that looks like ``username``, or None.
    One query."""
    taken = UsernameKey.objects.filter(key=username_key(username))
    if exclude is not None:
        taken = taken.exclude(user_id=exclude)
    return taken.values_list("user__username", flat=True).first()


def username_problem(username: str, other: str) -> str:
    return (
        f'"{username}" is too like the existing username "{other}": usernames must differ by more '
        "than case or look-alike characters"
    )


def username_check(username: str, *, exclude: int | None = None) -> None:
    """Raise ValidationError (code ``username_look_alike``) when another account's username
    looks like ``username``."""
    other = username_look_alike(username, exclude=exclude)
    if other is not None:
        raise ValidationError(username_problem(username, other), code="username_look_alike")


def username_key_keep(user: AbstractBaseUser) -> None:
    """Store the key of ``user``'s username (two statements at most). The unique index refuses
    it (IntegrityError) when another account took the key meanwhile."""
    key = username_key(user.get_username())
    if not UsernameKey.objects.filter(user_id=user.pk).update(key=key):
        UsernameKey.objects.create(user_id=user.pk, key=key)


def username_keys_make(users: Any, keys: Any) -> list[list[str]]:
    """Give every account of ``users`` (a user queryset) without a key in ``keys`` (the
    ``UsernameKey`` manager, historical in a migration) its key, except where another account
    already holds it. Returns the groups of usernames that look alike, the holder first, so that
    whoever runs it can rename the others."""
    held = dict(keys.values_list("key", "user__username"))
    have = set(keys.values_list("user_id", flat=True))
    clashes: dict[str, list[str]] = defaultdict(list)
    for pk, username in users.order_by("pk").values_list("pk", "username"):
        key = username_key(username)
        if pk in have:
            continue
        if key in held:
            clashes[key].append(username)
            continue
        keys.create(user_id=pk, key=key)
        held[key] = username
    return [[held[key], *names] for key, names in clashes.items()]
