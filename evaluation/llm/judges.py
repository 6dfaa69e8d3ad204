"""Judges made, changed and deleted (audited), each with its account ``judge:<name>``.

The account is what the judge's answers belong to: it cannot sign in (inactive, no
password), and its name holds a colon, which no username typed into a form may, so no
person can ever take it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotation.projects.usernames import username_check
from evaluation.llm.models import Judge, ModelEndpoint
from trees.audit import audit_record

ACCOUNT_PREFIX = "judge:"
FIELDS = ("kind", "endpoint", "system_prompt", "prompt_template", "sampling", "max_attempts")


def judge_account_name(name: str) -> str:
    return f"{ACCOUNT_PREFIX}{name}"


def is_judge_account(user: AbstractBaseUser | None) -> bool:
    """Whether ``user`` is a judge's account (by its name: no query)."""
    return user is not None and user.get_username().startswith(ACCOUNT_PREFIX)


@transaction.atomic
def judge_create(*, name: str, kind: str, endpoint: ModelEndpoint, **settings: Any) -> Judge:
    """A judge and its account."""
    account = judge_account_name(name)
    username_check(account)
    user = get_user_model().objects.create_user(username=account, password=None, is_active=False)
    judge = Judge(name=name, kind=kind, endpoint=endpoint, user=user, **_known(settings))
    judge.full_clean()
    judge.save()
    audit_record("judge.create", target=judge, details={"kind": kind, "endpoint": endpoint.name})
    return judge


@transaction.atomic
def judge_update(*, judge: Judge, changes: Mapping[str, Any]) -> Judge:
    """Change the judge's settings; its name (and so its account) stays."""
    changed = [name for name in FIELDS if name in changes and getattr(judge, name) != changes[name]]
    for name in changed:
        setattr(judge, name, changes[name])
    if changed:
        judge.full_clean()
        judge.save()
        audit_record("judge.update", target=judge, details={"changed": changed})
    return judge


@transaction.atomic
def judge_delete(*, judge: Judge) -> None:
    """Delete the judge; its account and its answers stay, as a person's do when they leave."""
    audit_record("judge.delete", target=judge, target_repr=str(judge))
    judge.delete()


def _known(settings: Mapping[str, Any]) -> dict[str, Any]:
    unknown = set(settings) - set(FIELDS)
    if unknown:
        raise TypeError(f"unknown judge settings: {', '.join(sorted(unknown))}")
    return dict(settings)
