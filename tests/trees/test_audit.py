"""The audit log: what one entry holds, who it names and through what, and the
read-only, searchable admin over it.

That every service writes its entry is tests/test_audit_coverage.py.
Personas: Alice is a superuser, Bob is staff with no permission on the log,
Carol is an annotator whose work is logged.
"""

from __future__ import annotations

import io
import json
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.management import call_command
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import timezone

from tests.factories import ConversationTreeFactory, DatasetFactory, PersonaFactory, StaffFactory, UserFactory
from trees.audit import (
    AuditMiddleware,
    Target,
    actions_register,
    audit_context,
    audit_record,
    audit_record_many,
    entries_for,
    registered_actions,
)
from trees.models import AuditEntry, ConversationTree, Dataset

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:trees_auditentry_changelist")
AUTH_QUERIES = 2  # the session and the user, on every admin page


@pytest.fixture
def alice() -> Any:
    user = StaffFactory(username="alice")
    user.save(update_fields=["password"])  # a stored hash, so that force_login's session holds
    return user


@pytest.fixture
def carol() -> Any:
    return PersonaFactory(username="carol")


@pytest.fixture
def as_alice(alice: Any) -> Client:
    client = Client()
    client.force_login(alice)
    return client


# One entry


def test_an_entry_names_who_did_what_to_what_where_and_how(carol: Any, django_assert_num_queries: Any):
    dataset = DatasetFactory(name="reviews")

    with django_assert_num_queries(1):
        entry = audit_record(
            "dataset.update",
            target=dataset,
            scope="reviews",
            details={"fields": ["description"]},
            actor=carol,
        )

    entry.refresh_from_db()
    assert (entry.actor, entry.actor_name, entry.via) == (carol, "carol", AuditEntry.Via.SYSTEM)
    assert (entry.action, entry.scope, entry.details) == (
        "dataset.update",
        "reviews",
        {"fields": ["description"]},
    )
    assert (entry.target_type, entry.target_id, entry.target_repr) == (
        "trees.dataset",
        str(dataset.pk),
        "reviews",
    )
    assert entry.get_action_display() == "changed a dataset"


def test_a_target_not_at_hand_is_named_by_the_same_insert(django_assert_num_queries: Any):
    tree = ConversationTreeFactory(external_id="t-17")

    with django_assert_num_queries(1):
        entry = audit_record("tree.delete", target=Target.row(ConversationTree, tree.pk, "external_id"))

    entry.refresh_from_db()
    assert (entry.target_type, entry.target_id, entry.target_repr) == (
        "trees.conversationtree",
        str(tree.pk),
        "t-17",
    )


def test_a_long_target_name_is_cut_to_fit():
    entry = audit_record("trees.export", target=Target(Dataset, 1, "x" * 500))
    entry.refresh_from_db()
    assert entry.target_repr == "x" * 200


def test_an_unregistered_action_is_refused_before_anything_is_written():
    with pytest.raises(ValueError, match=r'unregistered audit action "dataset\.rename"'):
        audit_record("dataset.rename")
    assert not AuditEntry.objects.exists()


def test_an_action_keeps_the_label_it_was_registered_with():
    actions_register({"dataset.create": "created a dataset"})  # the same again is fine
    with pytest.raises(ValueError, match="already registered"):
        actions_register({"dataset.create": "made a dataset"})
    assert "dataset.create" in registered_actions()


def test_an_entry_written_in_a_transaction_that_rolls_back_is_gone_with_it():
    with transaction.atomic():
        audit_record("dataset.create")
        transaction.set_rollback(True)
    assert not AuditEntry.objects.exists()


def test_the_entries_of_many_targets_are_one_insert(django_assert_num_queries: Any):
    datasets = [DatasetFactory(name=f"d{index}") for index in range(5)]

    with django_assert_num_queries(1):
        audit_record_many("dataset.delete", datasets, scope=lambda dataset: dataset.name)

    rows = AuditEntry.objects.order_by("id").values_list("action", "target_repr", "scope")
    assert list(rows) == [("dataset.delete", f"d{index}", f"d{index}") for index in range(5)]


def test_an_entry_outlives_its_actor_by_name(carol: Any):
    audit_record("dataset.create", actor=carol)
    carol.delete()
    entry = AuditEntry.objects.get()
    assert (entry.actor, entry.actor_name) == (None, "carol")


def test_the_history_of_a_target_is_its_entries_newest_first():
    first, second = DatasetFactory(name="first"), DatasetFactory(name="second")
    audit_record("dataset.create", target=first)
    audit_record("dataset.create", target=second)
    audit_record("dataset.update", target=first)
    assert [entry.action for entry in entries_for(first)] == ["dataset.update", "dataset.create"]


def test_an_anonymous_actor_is_nobody():
    entry = audit_record("dataset.create", actor=AnonymousUser())
    assert (entry.actor, entry.actor_name) == (None, "")


# Who and through what


def _handled(path: str, user: Any) -> AuditEntry:
    """The entry a view at ``path`` writes for ``user``, through the middleware."""
    written: list[AuditEntry] = []

    def view(request: HttpRequest) -> HttpResponse:
        written.append(audit_record("dataset.create"))
        return HttpResponse()

    request = RequestFactory().post(path)
    request.user = user
    AuditMiddleware(view)(request)
    return written[0]


@pytest.mark.parametrize(
    ("path", "via"),
    [("/api/v1/datasets", "api"), ("/admin/trees/dataset/add/", "admin"), ("/projects/p/", "web")],
)
def test_the_request_says_who_acts_and_its_path_through_what(carol: Any, path: str, via: str):
    entry = _handled(path, carol)
    assert (entry.actor, entry.actor_name, entry.via) == (carol, "carol", via)


def test_an_anonymous_request_acts_as_nobody_through_its_channel():
    entry = _handled("/api/v1/datasets", AnonymousUser())
    assert (entry.actor, entry.via) == (None, "api")


def test_once_the_request_is_answered_entries_are_the_systems_again(carol: Any):
    _handled("/projects/p/", carol)
    entry = audit_record("dataset.create")
    assert (entry.actor, entry.actor_name, entry.via) == (None, "", "system")


def test_a_command_context_names_the_command_or_the_user_it_runs_as(carol: Any):
    with audit_context(name="manage.py import_trees"):
        by_command = audit_record("dataset.create")
    with audit_context(actor=carol):
        as_carol = audit_record("dataset.create")
    assert (by_command.actor, by_command.actor_name, by_command.via) == (
        None,
        "manage.py import_trees",
        "command",
    )
    assert (as_carol.actor, as_carol.actor_name, as_carol.via) == (carol, "carol", "command")


def test_an_actor_given_outright_wins_over_the_request(carol: Any):
    dora = PersonaFactory(username="dora")
    written: list[AuditEntry] = []

    def view(request: HttpRequest) -> HttpResponse:
        written.append(audit_record("dataset.create", actor=dora))
        return HttpResponse()

    request = RequestFactory().post("/projects/p/")
    request.user = carol
    AuditMiddleware(view)(request)
    assert (written[0].actor_name, written[0].via) == ("dora", "web")


def test_a_command_logs_its_writes_as_the_command(tmp_path: Any):
    source = tmp_path / "items.jsonl"
    source.write_text(json.dumps({"id": "i1", "tree": {"id": "r", "role": "user", "content": "hi"}}) + "\n")

    call_command("import_trees", "cli-data", str(source), "--format", "potato", stdout=io.StringIO())

    entries = list(AuditEntry.objects.order_by("id").values_list("action", "actor_name", "via", "scope"))
    assert entries == [
        ("dataset.create", "manage.py import_trees", "command", "cli-data"),
        ("trees.import", "manage.py import_trees", "command", "cli-data"),
    ]


# The admin: read-only, searchable


def _entries() -> None:
    carol, dora = PersonaFactory(username="carol"), PersonaFactory(username="dora")
    reviews, chats = DatasetFactory(name="reviews"), DatasetFactory(name="chats")
    audit_record("dataset.create", target=reviews, scope="reviews", actor=carol)
    audit_record("trees.import", target=reviews, scope="reviews", actor=carol, details={"trees_created": 3})
    audit_record("trees.export", target=chats, scope="chats", actor=dora)
    with audit_context(name="manage.py export_trees"):
        audit_record("trees.export", target=chats, scope="chats")


def _listed(client: Client, **params: str) -> list[tuple[str, str]]:
    response = client.get(CHANGELIST, params)
    assert response.status_code == 200
    return [(entry.action, entry.actor_name) for entry in response.context["cl"].result_list]


def test_the_log_lists_entries_newest_first(as_alice: Client):
    _entries()
    assert _listed(as_alice) == [
        ("trees.export", "manage.py export_trees"),
        ("trees.export", "dora"),
        ("trees.import", "carol"),
        ("dataset.create", "carol"),
    ]


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("carol", [("trees.import", "carol"), ("dataset.create", "carol")]),  # a person, exactly
        ("chats", [("trees.export", "manage.py export_trees"), ("trees.export", "dora")]),  # a scope
        ("trees.im", [("trees.import", "carol")]),  # how an action starts
        ("revi", [("trees.import", "carol"), ("dataset.create", "carol")]),  # how a target's name starts
        ("car", []),  # people are named whole
    ],
)
def test_the_log_is_searched_by_person_scope_action_and_target(as_alice: Client, query: str, found: list):
    _entries()
    assert _listed(as_alice, q=query) == found


def test_the_log_is_filtered_by_action_and_channel(as_alice: Client):
    _entries()
    assert _listed(as_alice, action__exact="trees.export", via__exact="command") == [
        ("trees.export", "manage.py export_trees")
    ]
    choices = [choice["display"] for choice in _filter_choices(as_alice, "action")]
    assert "imported trees" in choices  # every registered action, without reading the log for them


def test_the_log_is_filtered_by_date(as_alice: Client):
    old = audit_record("dataset.create", scope="old")
    AuditEntry.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=30))
    audit_record("dataset.create", scope="new")

    week = next(
        choice for choice in _filter_choices(as_alice, "created at") if choice["display"] == "Past 7 days"
    )
    response = as_alice.get(CHANGELIST + week["query_string"])
    assert [entry.scope for entry in response.context["cl"].result_list] == ["new"]


def _filter_choices(client: Client, title: str) -> list[dict[str, Any]]:
    response = client.get(CHANGELIST)
    spec = next(spec for spec in response.context["cl"].filter_specs if spec.title == title)
    return list(spec.choices(response.context["cl"]))


@pytest.mark.parametrize("rows", [1, 60])
def test_the_log_page_costs_the_same_queries_whatever_its_length(
    as_alice: Client, rows: int, django_assert_num_queries: Any
):
    dataset = DatasetFactory(name="reviews")
    people = [PersonaFactory(username=f"p{index}") for index in range(rows)]
    audit_record_many("trees.export", [dataset] * rows, scope="reviews")
    for entry, person in zip(AuditEntry.objects.all(), people, strict=True):
        entry.actor = person
        entry.save()

    # The session, the user, the count and the page's rows: the filters' choices need no query.
    with django_assert_num_queries(AUTH_QUERIES + 2):
        response = as_alice.get(CHANGELIST)
    assert len(response.context["cl"].result_list) == rows


def test_an_entry_shows_what_changed_and_links_to_its_target(as_alice: Client):
    dataset = DatasetFactory(name="reviews")
    entry = audit_record("trees.import", target=dataset, scope="reviews", details={"trees_created": 3})

    page = as_alice.get(reverse("admin:trees_auditentry_change", args=[entry.pk])).content.decode()

    assert "&quot;trees_created&quot;: 3" in page
    assert f'href="{reverse("admin:trees_dataset_change", args=[dataset.pk])}"' in page


def test_nobody_adds_changes_or_deletes_an_entry_in_the_admin(as_alice: Client):
    entry = audit_record("dataset.create", scope="reviews")
    change = reverse("admin:trees_auditentry_change", args=[entry.pk])

    assert as_alice.get(reverse("admin:trees_auditentry_add")).status_code == 403
    assert as_alice.post(change, {"scope": "elsewhere"}).status_code == 403
    assert (
        as_alice.post(reverse("admin:trees_auditentry_delete", args=[entry.pk]), {"post": "yes"}).status_code
        == 403
    )
    assert as_alice.get(CHANGELIST).context["action_form"] is None  # no bulk delete either
    entry.refresh_from_db()
    assert entry.scope == "reviews"


def test_staff_without_the_permission_do_not_see_the_log():
    bob = UserFactory(username="bob", is_staff=True)
    bob.save(update_fields=["password"])
    client = Client()
    client.force_login(bob)
    assert client.get(CHANGELIST).status_code == 403


@pytest.mark.postgres
def test_each_searched_column_of_the_log_has_one_plain_index_on_postgresql():
    """Every entry writes each index of the log, two entries a page cycle: ``action`` and
    ``scope`` have one plain index each, without the ``varchar_pattern_ops`` twin that
    ``db_index=True`` would add (no query matches them with LIKE alone: the admin's search
    ORs them with columns without an index)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'trees_auditentry'")
        indexes = dict(cursor.fetchall())

    assert not [name for name, definition in indexes.items() if "pattern_ops" in definition]
    assert indexes["audit_entry_action"].endswith("USING btree (action)")
    assert indexes["audit_entry_scope"].endswith("USING btree (scope)")
