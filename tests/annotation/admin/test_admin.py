"""The annotation admin: projects whose configuration is checked on the form
and saved through the services, members inline, exports as actions, an
import page, and read-only answers and assignments with constant queries.

Personas: Alice is a superuser, Bob is staff who may only look at projects
and annotations, Charlie is a signed-in user who is not staff.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Annotation, Membership, Project, ProjectItem
from tests.annotation.exports.test_exports import seed_configs, seed_item, seed_output
from tests.factories import (
    AnnotationFactory,
    AssignmentFactory,
    DatasetFactory,
    MembershipFactory,
    PotatoTreeFactory,
    ProjectFactory,
    StaffFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

PROJECT_ADD = reverse("admin:annotation_project_add")
PROJECT_CHANGELIST = reverse("admin:annotation_project_changelist")
ANNOTATION_CHANGELIST = reverse("admin:annotation_annotation_changelist")
ASSIGNMENT_CHANGELIST = reverse("admin:annotation_assignment_changelist")
IMPORT_URL = reverse("admin:annotation_annotation_import")
BAD_CONFIG = (
    "annotation_schemes:\n"
    "  - annotation_type: tree_annotation\n"
    "    name: rated\n"
    "    description: Rate the conversation\n"
    "    node_scheme: {annotation_type: likert, size: 1}\n"
    "    path_selection: {enabled: yes please}\n"
)


def saved(user: Any) -> Any:
    """``user`` with its password stored (the factory skips the save ``force_login`` needs)."""
    user.save(update_fields=["password"])
    return user


@pytest.fixture
def alice() -> Any:
    return saved(StaffFactory(username="alice"))


@pytest.fixture
def bob() -> Any:
    user = saved(UserFactory(username="bob", is_staff=True))
    user.user_permissions.add(*Permission.objects.filter(codename__in=["view_project", "view_annotation"]))
    return user


@pytest.fixture
def as_alice(client: Client, alice: Any) -> Client:
    client.force_login(alice)
    return client


@pytest.fixture
def support():
    dataset = DatasetFactory(name="support")
    PotatoTreeFactory(dataset=dataset, item=seed_item())
    PotatoTreeFactory(dataset=dataset, item={**seed_item(), "id": "conv_002"})
    return dataset


@pytest.fixture
def quality(support):
    return ProjectFactory(name="quality", dataset=support, config_yaml=seed_configs()[0])


def project_form(
    dataset, config_yaml: str, *, memberships: list[dict[str, Any]] = (), initial: int = 0, **fields: Any
):
    data = {
        "name": "judging",
        "title": "",
        "dataset": dataset.pk,
        "mode": "annotate",
        "config_yaml": config_yaml,
        "instructions": "",
        "memberships-TOTAL_FORMS": len(memberships),
        "memberships-INITIAL_FORMS": initial,
        "memberships-MIN_NUM_FORMS": 0,
        "memberships-MAX_NUM_FORMS": 1000,
        **fields,
    }
    for index, membership in enumerate(memberships):
        data.update({f"memberships-{index}-{key}": value for key, value in membership.items()})
    return data


def messages_of(response) -> list[tuple[str, str]]:
    return [(message.level_tag, message.message) for message in get_messages(response.wsgi_request)]


# -- projects: the configuration ------------------------------------------------------------


def test_a_bad_config_shows_each_problem_with_its_key_path_on_the_form(as_alice, support):
    response = as_alice.post(PROJECT_ADD, project_form(support, BAD_CONFIG))

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["config_yaml"] == [
        "annotation_schemes[0].node_scheme.size: must be an integer ≥ 2",
        "annotation_schemes[0].path_selection.enabled: must be true or false, got a string",
    ]
    assert "annotation_schemes[0].node_scheme.size: must be an integer ≥ 2" in response.text
    assert not Project.objects.exists()


def test_a_config_with_text_that_cannot_be_stored_is_refused_on_the_form_by_line(as_alice, support):
    """YAML's escapes spell a lone surrogate, which no database stores: it was a server error."""
    config = 'annotation_task_name: "Rate \\ud800"\n' + seed_configs()[0]

    response = as_alice.post(PROJECT_ADD, project_form(support, config))

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["config_yaml"] == [
        "line 1 column 23: contains a lone UTF-16 surrogate (\\ud800), which is not text and cannot be stored"
    ]
    assert not Project.objects.exists()


def test_creating_a_project_saves_the_checked_config_makes_the_trees_items_and_warns_of_ignored_keys(
    as_alice, support
):
    config = seed_configs()[0] + "\nport: 8000\nassignment_strategy: random\n"

    response = as_alice.post(PROJECT_ADD, project_form(support, config), follow=True)

    project = Project.objects.get(name="judging")
    assert project.config["annotation_schemes"][0]["name"] == "response_quality"
    assert project.config["assignment"]["order"] == "random"
    assert sorted(
        ProjectItem.objects.filter(project=project).values_list("tree__external_id", flat=True)
    ) == ["conv_001", "conv_002"]
    assert ("warning", "Ignored (Potato settings Branchpoint does not use): port") in messages_of(response)
    assert ("warning", 'assignment_strategy: read as assignment.order "random"') in messages_of(response)


def test_changing_the_config_goes_through_the_service_and_keeps_the_dataset(as_alice, quality):
    url = reverse("admin:annotation_project_change", args=[quality.pk])
    other = DatasetFactory(name="other")
    data = project_form(other, seed_configs()[1], name="quality")

    as_alice.post(url, data)

    quality.refresh_from_db()
    assert quality.config["annotation_schemes"][0]["name"] == "response_rating"
    assert quality.dataset.name == "support"


def test_a_bad_config_on_change_is_shown_and_nothing_changes(as_alice, quality):
    url = reverse("admin:annotation_project_change", args=[quality.pk])

    response = as_alice.post(url, project_form(quality.dataset, BAD_CONFIG, name="quality"))

    assert len(response.context["adminform"].form.errors["config_yaml"]) == 2
    quality.refresh_from_db()
    assert quality.config["annotation_schemes"][0]["name"] == "response_quality"


# -- projects: members ---------------------------------------------------------------------------


def test_members_are_added_and_removed_on_the_project_page(as_alice, quality):
    carol = UserFactory(username="carol")
    dave = UserFactory(username="dave")
    existing = MembershipFactory(project=quality, user=dave, role="reviewer")
    url = reverse("admin:annotation_project_change", args=[quality.pk])

    as_alice.post(
        url,
        project_form(
            quality.dataset,
            quality.config_yaml,
            name="quality",
            initial=1,
            memberships=[
                {"id": existing.pk, "project": quality.pk, "DELETE": "on"},
                {"user": carol.pk, "role": "annotator", "project": quality.pk},
            ],
        ),
    )

    assert list(Membership.objects.values_list("user__username", "role")) == [("carol", "annotator")]


def test_members_can_be_named_when_the_project_is_created(as_alice, support):
    carol = UserFactory(username="carol")

    as_alice.post(
        PROJECT_ADD,
        project_form(support, seed_configs()[0], memberships=[{"user": carol.pk, "role": "manager"}]),
    )

    assert list(Membership.objects.values_list("project__name", "user__username", "role")) == [
        ("judging", "carol", "manager")
    ]


# -- projects: exports -----------------------------------------------------------------------------


@pytest.fixture
def answered(quality):
    tree = quality.dataset.trees.get(external_id="conv_001")
    AnnotationFactory(
        project=quality,
        tree=tree,
        user=UserFactory(username="carol"),
        scheme="response_quality",
        payload=seed_output()["response_quality"],
    )
    return quality


@pytest.mark.parametrize(("format_name", "count"), [("potato", 1), ("pairs", 1), ("sft", 1)])
def test_each_export_is_an_action_that_streams_a_download(as_alice, answered, format_name, count):
    response = as_alice.post(
        PROJECT_CHANGELIST, {"action": f"export_{format_name}", "_selected_action": [answered.pk]}
    )

    assert response.streaming
    assert response["Content-Disposition"] == f'attachment; filename="quality.{format_name}.jsonl"'
    records = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert len(records) == count
    if format_name == "potato":
        assert records[0]["annotations"] == seed_output()


# -- the import page ---------------------------------------------------------------------------------


def upload(*records: dict[str, Any]) -> SimpleUploadedFile:
    return SimpleUploadedFile("answers.jsonl", "".join(json.dumps(r) + "\n" for r in records).encode())


def test_the_import_page_imports_a_file_and_shows_the_summary(as_alice, quality):
    page = as_alice.get(IMPORT_URL, {"project": quality.pk})
    assert page.context["form"]["project"].value() == str(quality.pk)

    response = as_alice.post(
        IMPORT_URL,
        {
            "project": quality.pk,
            "file": upload({"id": "conv_001", "user": "carol", "annotations": seed_output()}),
        },
        follow=True,
    )

    assert response.redirect_chain == [(f"{ANNOTATION_CHANGELIST}?project__id__exact={quality.pk}", 302)]
    assert messages_of(response) == [
        ("success", "imported into quality: 1 record, 1 annotation; 1 annotator created: carol")
    ]
    assert Annotation.objects.get().source == "import"


def test_a_bad_file_shows_every_problem_and_imports_nothing(as_alice, quality):
    response = as_alice.post(
        IMPORT_URL,
        {
            "project": quality.pk,
            "file": upload(
                {"id": "conv_001", "user": "carol", "annotations": seed_output()},
                {
                    "id": "conv_404",
                    "user": "dave",
                    "annotations": {"response_quality": {"selected_path": ["resp_a"]}},
                },
            ),
        },
    )

    assert response.status_code == 200
    assert [str(issue) for issue in response.context["report"].errors] == [
        'line 2: id: no item "conv_404" in project "quality"',
    ]
    assert "nothing imported into quality: 1 error in 2 records" in response.text
    assert not Annotation.objects.exists()


def test_only_staff_allowed_to_add_annotations_may_import(client, bob, quality):
    charlie = saved(UserFactory(username="charlie"))
    client.force_login(charlie)
    assert client.get(IMPORT_URL).status_code == 302  # to the admin login

    client.force_login(bob)
    assert client.get(IMPORT_URL).status_code == 403
    assert "import-annotations-link" not in client.get(ANNOTATION_CHANGELIST).text


# -- read-only answers and assignments -----------------------------------------------------------------


def test_annotations_and_assignments_cannot_be_added_changed_or_deleted(as_alice, answered):
    annotation = Annotation.objects.get()
    assignment = AssignmentFactory(project=answered, tree=annotation.tree, user=annotation.user)

    assert as_alice.get(reverse("admin:annotation_annotation_add")).status_code == 403
    assert as_alice.get(reverse("admin:annotation_assignment_add")).status_code == 403
    page = as_alice.get(reverse("admin:annotation_annotation_change", args=[annotation.pk]))
    assert page.context["has_change_permission"] is False
    assert "&quot;selected_path&quot;" in page.text  # the answer, as indented JSON
    assert (
        as_alice.get(reverse("admin:annotation_annotation_delete", args=[annotation.pk])).status_code == 403
    )
    assert (
        as_alice.get(reverse("admin:annotation_assignment_delete", args=[assignment.pk])).status_code == 403
    )


def test_the_answers_can_be_filtered_by_project_status_scheme_source_and_user(as_alice, answered):
    other = ProjectFactory(dataset=answered.dataset, config_yaml=seed_configs()[2])
    AnnotationFactory(
        project=other,
        tree=answered.dataset.trees.first(),
        user=UserFactory(username="dave"),
        scheme="best_path",
    )

    response = as_alice.get(ANNOTATION_CHANGELIST)

    assert [spec.title for spec in response.context["cl"].filter_specs] == [
        "project",
        "status",
        "scheme",
        "source",
        "user",
    ]
    filtered = as_alice.get(ANNOTATION_CHANGELIST, {"source__exact": "import"})
    assert filtered.context["cl"].result_count == 0


def changelist_queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def annotate_many(project, count: int) -> None:
    trees = list(project.dataset.trees.all())
    for _ in range(count):
        user = UserFactory()
        for tree in trees:
            AnnotationFactory(project=project, tree=tree, user=user, scheme="response_quality", payload={})
            AssignmentFactory(project=project, tree=tree, user=user)


@pytest.mark.parametrize("url", [ANNOTATION_CHANGELIST, ASSIGNMENT_CHANGELIST, PROJECT_CHANGELIST])
def test_changelists_cost_the_same_queries_for_few_rows_or_many(as_alice, quality, url):
    annotate_many(quality, 1)
    few = changelist_queries(as_alice, url)
    annotate_many(quality, 8)
    ProjectFactory(dataset=quality.dataset, config_yaml=seed_configs()[2])

    assert changelist_queries(as_alice, url) == few


def test_the_answers_list_is_a_pinned_number_of_queries(as_alice, quality):
    annotate_many(quality, 5)

    # The session and the signed-in user, the choices of the project and user
    # filters (only those with answers), the count for the paginator, the page
    # of rows (project, tree and user joined) and the scheme filter's values.
    with CaptureQueriesContext(connection) as queries:
        as_alice.get(ANNOTATION_CHANGELIST)
    assert len(queries) == 7, "\n".join(query["sql"][:200] for query in queries)
