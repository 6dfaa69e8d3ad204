"""API tokens: made, checked and revoked here; the admin, ``create_token`` and the API's
authentication all go through these functions.

A token reads ``bp_<prefix>_<secret>``: 8 random characters that find its row
and name it in lists, then 43 characters (256 bits) of secret. Only the
SHA-256 hash of the whole token is stored — a slow password hash buys
nothing against 256 random bits and would cost every request — so the token
can be shown exactly once, when it is made.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import secrets
import string
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from annotation.models import ApiToken
from annotation.recent import Recent
from trees import sql
from trees.audit import audit_record, audit_record_many

SCHEME = "bp"
PREFIX_LENGTH = 8
_PREFIX_ALPHABET = string.ascii_lowercase + string.digits
# last_used_at is a hint for people auditing tokens, not a log: refreshed at most this often.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class TokenInvalid(Exception):
    """The token is unknown, malformed, revoked or expired; the message says which."""


@dataclass(frozen=True)
class NewToken:
    """A token just made: ``secret`` is the only copy of the token there will ever be."""

    token: ApiToken
    secret: str


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_create(*, user: AbstractBaseUser, name: str, expires_at: datetime | None = None) -> NewToken:
    """Make a token for ``user``; returns it with its secret, which is not stored."""
    for _ in range(5):
        prefix = "".join(secrets.choice(_PREFIX_ALPHABET) for _ in range(PREFIX_LENGTH))
        secret = f"{SCHEME}_{prefix}_{secrets.token_urlsafe(32)}"
        try:
            with transaction.atomic():
                token = ApiToken.objects.create(
                    user=user, name=name, prefix=prefix, key_hash=token_hash(secret), expires_at=expires_at
                )
                details = {"owner": user.get_username(), "name": name, "expires_at": expires_at}
                audit_record("token.create", target=token, scope=user.get_username(), details=details)
        except IntegrityError:
            continue  # the prefix was taken (one chance in 36**8 per token): draw again
        return NewToken(token, secret)
    raise RuntimeError("could not draw a free token prefix")


@transaction.atomic
def tokens_revoke(tokens: QuerySet[ApiToken], *, now: datetime | None = None) -> int:
    """Revoke ``tokens`` (those not revoked already), logging each; returns how many were."""
    live = list(
        ApiToken.objects.filter(pk__in=tokens.values("pk"), revoked_at__isnull=True)
        .select_related("user")
        .select_for_update(of=("self",))
        .order_by("pk")
    )
    if not live:
        return 0
    ApiToken.objects.filter(pk__in=[token.pk for token in live]).update(revoked_at=now or timezone.now())
    audit_record_many("token.revoke", live, scope=lambda token: token.user.get_username())
    tokens_forget()  # refused at once here; other processes follow (annotation.recent)
    return len(live)


# Tokens lately read, with their users, by prefix (``annotation.recent``): a copy of each per request.
_recent: Recent[str, tuple[ApiToken, AbstractBaseUser]] = Recent()


def tokens_forget() -> None:
    """Forget the tokens and users this process read lately: they changed."""
    _recent.forget_all()


def _token_with_user(prefix: str) -> ApiToken | None:
    """The token with ``prefix`` and its user, as read a moment ago (``annotation.recent``) or
    now, in one statement written out (``trees.sql``): every API request needs them."""
    kept = _recent.get(prefix)
    if kept is not None:
        token = copy.copy(kept[0])
        token.user = copy.copy(kept[1])  # each request's own: it remembers roles on it
        return token
    token = _token_with_user_read(prefix)
    if token is not None:
        _recent.keep(prefix, (copy.copy(token), copy.copy(token.user)))
    return token


def _token_with_user_read(prefix: str) -> ApiToken | None:
    users = get_user_model()
    token_columns, user_columns = sql.columns(ApiToken, "token"), sql.columns(users, "person")
    row = sql.fetch_one(
        f"SELECT {token_columns.sql}, {user_columns.sql} FROM {sql.table(ApiToken)} token "
        f"JOIN {sql.table(users)} person ON person.{users._meta.pk.column} = token.user_id "
        "WHERE token.prefix = %s",
        [prefix],
    )
    if row is None:
        return None
    token = token_columns.load(row)
    token.user = user_columns.load(row, token_columns.width)
    return token


def token_authenticate(secret: str, *, now: datetime | None = None) -> ApiToken:
    """The live token whose secret is ``secret``, with its user (one query, and a write at
    most once a minute per token to note when it was last used).

    Raises TokenInvalid otherwise. Whether a token was revoked or expired is
    only said once its secret matched, so nobody learns anything from a guess.
    """
    scheme, _, rest = secret.partition("_")
    prefix, _, _ = rest.partition("_")
    if scheme != SCHEME or len(prefix) != PREFIX_LENGTH:
        raise TokenInvalid("the token is not a Branchpoint API token (bp_...)")
    token = _token_with_user(prefix)
    if token is None or not hmac.compare_digest(token.key_hash, token_hash(secret)):
        raise TokenInvalid("the token is not valid")
    now = now or timezone.now()
    if token.revoked_at is not None:
        raise TokenInvalid("the token was revoked")
    if token.expires_at is not None and token.expires_at <= now:
        raise TokenInvalid("the token has expired")
    if not token.user.is_active:
        raise TokenInvalid("the token's user is inactive")
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        # Conditional, so that concurrent requests with the same token write it once.
        ApiToken.objects.filter(pk=token.pk).filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lte=now - LAST_USED_RESOLUTION)
        ).update(last_used_at=now)
        token.last_used_at = now
        _recent.forget(prefix)  # read again next time, with its new last use
    return token
