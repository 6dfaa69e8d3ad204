"""Usernames that only differ by case, width or look-alike characters cannot belong to two
accounts (issue 16): ``root``, ``Root``, ``ROOT``, ``root`` in full width
and ``root`` with Cyrillic o's are one name.

- Each account's username has a key (its TR39 skeleton, case folded and NFKC-normalised),
  stored under a unique index: the database refuses a second account with the same key,
  however the account is made; a save refuses it first, with the reason.
- The admin's forms (adding and renaming) say so on the username field; ``createsuperuser``
  says so and makes nothing.
- An annotation import naming ``Root`` when ``root`` exists is refused at that record's
  line, not mapped to ``root``: the look-alike may be someone else. Two new look-alike names
  in one file are refused alike.
- Names that merely resemble each other (``alice``, ``alicia``) are different names.
- Accounts that looked alike before the keys existed keep working (they log in; nothing
  is deleted); the key maker and ``usernames_check`` name them, to be renamed.
"""

from __future__ import annotations

import unicodedata

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from django.test import Client

from annotation.models import UsernameKey
from annotation.projects.services import user_get_or_create_unusable
from annotation.projects.usernames import username_key, username_keys_make
from tests.annotation.imports.test_imports import lines, project, record, run, support  # noqa: F401
from tests.factories import StaffFactory, UserFactory

pytestmark = pytest.mark.django_db

User = get_user_model()
CYRILLIC_ROOT = "r\u043e\u043et"  # both o's are CYRILLIC SMALL LETTER O
LOOK_ALIKES = ["Root", "ROOT", "\uff52\uff4f\uff4f\uff54", CYRILLIC_ROOT]  # the third in full width


def refusal(username: str, other: str = "root") -> str:
    return (
        f'"{username}" is too like the existing username "{other}": usernames must differ by more '
        "than case or look-alike characters"
    )


@pytest.mark.parametrize("username", LOOK_ALIKES)
def test_a_look_alike_of_an_existing_username_is_refused_with_the_reason(username):
    User.objects.create_user("root")

    with pytest.raises(ValidationError) as refused:
        User.objects.create_user(username)

    # Django reads the full-width name as "root" (NFKC) before anything else sees it.
    assert refused.value.messages == [refusal(unicodedata.normalize("NFKC", username))]
    assert list(User.objects.values_list("username", flat=True)) == ["root"]


def test_the_database_itself_refuses_a_second_account_with_the_same_key():
    root = User.objects.create_user("root")
    # Made around the checks (as a bulk insert would be): the key is what the index sees.
    other = User.objects.bulk_create([User(username="Root")])[0]

    with pytest.raises(IntegrityError), transaction.atomic():
        UsernameKey.objects.create(user=other, key=username_key("Root"))
    assert UsernameKey.objects.get(user=root).key == username_key(CYRILLIC_ROOT) == "root"


def test_different_names_stay_different_and_renaming_oneself_is_fine():
    alice = User.objects.create_user("alice")
    User.objects.create_user("alicia")

    alice.username = "Alice"  # the same person's own name, differently spelt
    alice.save()

    assert sorted(UsernameKey.objects.values_list("key", flat=True)) == ["alice", "alicia"]


def test_the_admin_refuses_a_look_alike_on_adding_and_on_renaming():
    admin = Client()
    admin.force_login(StaffFactory(username="admin"))
    bob = UserFactory(username="bob")
    UserFactory(username="root")

    added = admin.post(
        "/admin/auth/user/add/",
        {
            "username": CYRILLIC_ROOT,
            "usable_password": "true",
            "password1": "x-Vb7-long-enough",
            "password2": "x-Vb7-long-enough",
        },
    )
    renamed = admin.post(
        f"/admin/auth/user/{bob.pk}/change/",
        {"username": "Root", "date_joined_0": "2025-01-01", "date_joined_1": "00:00:00"},
    )

    assert added.status_code == renamed.status_code == 200  # the form again, with the reason
    assert added.context["adminform"].form.errors["username"] == [refusal(CYRILLIC_ROOT)]
    assert renamed.context["adminform"].form.errors["username"] == [refusal("Root")]
    assert set(User.objects.values_list("username", flat=True)) == {"admin", "bob", "root"}


def test_createsuperuser_refuses_a_look_alike(monkeypatch):
    User.objects.create_user("root")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "x-Vb7-long-enough")

    with pytest.raises(CommandError, match="too like the existing username"):
        call_command("createsuperuser", "--noinput", "--username", "Root", "--email", "r@example.org")

    assert not User.objects.filter(username="Root").exists()


def test_an_annotation_import_refuses_a_look_alike_at_its_line_and_writes_nothing(project):  # noqa: F811
    UserFactory(username="root")

    report = run(project, lines(record(user="carol"), record(user="Root")))

    assert not report.committed
    assert [str(issue) for issue in report.errors] == [f"line 2: user: {refusal('Root')}"]
    assert not User.objects.filter(username__in=["carol", "Root"]).exists()


def test_two_new_look_alike_names_in_one_import_are_refused_alike(project):  # noqa: F811
    report = run(project, lines(record(user="dave"), record(id="conv_001", user="DAVE")))

    assert [str(issue) for issue in report.errors] == [f"line 2: user: {refusal('DAVE', 'dave')}"]


def test_an_unusable_account_is_never_made_for_a_look_alike():
    root = User.objects.create_user("root")

    assert user_get_or_create_unusable("root") == (root, False)
    with pytest.raises(ValidationError):
        user_get_or_create_unusable("Root")


def test_look_alikes_from_before_the_keys_keep_working_and_are_named(capsys):
    # As a database that had both before migration 0009: no keys yet.
    _, legacy = User.objects.bulk_create([User(username="root"), User(username="Root")])
    UsernameKey.objects.all().delete()

    clashes = username_keys_make(User.objects.all(), UsernameKey.objects)
    legacy.last_login = legacy.date_joined
    legacy.save(update_fields=["last_login"])  # what a login writes: not refused
    with pytest.raises(SystemExit) as exited:
        call_command("usernames_check")

    assert clashes == [["root", "Root"]]
    assert list(UsernameKey.objects.values_list("user__username", flat=True)) == ["root"]
    assert exited.value.code == 2
    assert capsys.readouterr().out == '"Root" looks like "root": rename it\n'
