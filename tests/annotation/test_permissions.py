"""Who may do what in a project, by role.

Alice manages the project, Bob annotates, Carol reviews, Dan both annotates
and reviews, Erin is a superuser with no membership, Oscar is an outsider
(a member of another project only), and an anonymous visitor.
"""

import pytest
from django.contrib.auth.models import AnonymousUser

from annotation import permissions
from annotation.projects.services import membership_add, membership_remove
from tests.factories import MembershipFactory, PersonaFactory, ProjectFactory

pytestmark = pytest.mark.django_db

CHECKS = ["can_view_project", "can_annotate", "can_review", "can_manage", "can_see_all_annotations"]


@pytest.fixture
def project():
    return ProjectFactory(name="ratings")


@pytest.fixture
def people(project):
    other = ProjectFactory(name="elsewhere")
    people = {
        "alice": PersonaFactory(username="alice"),
        "bob": PersonaFactory(username="bob"),
        "carol": PersonaFactory(username="carol"),
        "dan": PersonaFactory(username="dan"),
        "erin": PersonaFactory(username="erin", is_staff=True, is_superuser=True),
        "oscar": PersonaFactory(username="oscar"),
        "anonymous": AnonymousUser(),
    }
    MembershipFactory(project=project, user=people["alice"], role="manager")
    MembershipFactory(project=project, user=people["bob"], role="annotator")
    MembershipFactory(project=project, user=people["carol"], role="reviewer")
    MembershipFactory(project=project, user=people["dan"], role="annotator")
    MembershipFactory(project=project, user=people["dan"], role="reviewer")
    MembershipFactory(project=other, user=people["oscar"], role="manager")
    return people


@pytest.mark.parametrize(
    ("person", "allowed"),
    [
        ("alice", {"can_view_project", "can_review", "can_manage", "can_see_all_annotations"}),
        ("bob", {"can_view_project", "can_annotate"}),
        ("carol", {"can_view_project", "can_review", "can_see_all_annotations"}),
        ("dan", {"can_view_project", "can_annotate", "can_review", "can_see_all_annotations"}),
        ("erin", {"can_view_project", "can_review", "can_manage", "can_see_all_annotations"}),
        ("oscar", set()),
        ("anonymous", set()),
    ],
)
def test_what_each_role_may_do_in_a_project(project, people, person, allowed):
    user = people[person]

    assert {check for check in CHECKS if getattr(permissions, check)(user, project)} == allowed


def test_a_superuser_annotates_only_where_they_are_an_annotator(project, people):
    erin = people["erin"]
    membership_add(project=project, user=erin, role="annotator")
    permissions.forget_roles(erin)

    assert permissions.can_annotate(erin, project)


def test_roles_are_read_once_per_user_and_project(project, people, django_assert_num_queries):
    bob = people["bob"]

    with django_assert_num_queries(1):
        for check in CHECKS:
            getattr(permissions, check)(bob, project)

    assert permissions.roles_in(bob, project) == frozenset({"annotator"})


def test_remembered_roles_are_dropped_when_asked(project, people):
    oscar = people["oscar"]
    assert not permissions.can_annotate(oscar, project)

    membership_add(project=project, user=oscar, role="annotator")
    permissions.forget_roles(oscar)

    assert permissions.can_annotate(oscar, project)


def test_a_removed_membership_takes_its_rights_away(project, people):
    bob = people["bob"]

    assert membership_remove(project=project, user=bob, role="annotator") == 1
    permissions.forget_roles(bob)

    assert not permissions.can_view_project(bob, project)


def test_adding_a_membership_twice_keeps_one(project, people):
    first = membership_add(project=project, user=people["bob"], role="annotator")

    assert membership_add(project=project, user=people["bob"], role="annotator") == first


def test_an_unknown_role_is_refused(project, people):
    with pytest.raises(ValueError, match='unknown role "owner" \\(expected manager, annotator, reviewer\\)'):
        membership_add(project=project, user=people["bob"], role="owner")


@pytest.mark.parametrize(
    ("person", "visible"),
    [
        ("alice", ["ratings"]),
        ("dan", ["ratings"]),  # two roles, listed once
        ("oscar", ["elsewhere"]),
        ("erin", ["elsewhere", "ratings"]),
        ("anonymous", []),
    ],
)
def test_visible_projects_are_those_the_user_belongs_to(people, person, visible):
    assert [project.name for project in permissions.visible_projects(people[person])] == visible
