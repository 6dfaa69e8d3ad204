"""Projects over the API: the ones the caller may see, one with its configuration and
progress, and its members.

    GET    projects                        the caller's projects, with their progress
    POST   projects                        a new project over a dataset (admins; staff with the permission)
    GET    projects/{name}                 configuration, instructions, the caller's roles and progress
    GET    projects/{name}/members         members and their roles (managers, reviewers)
    POST   projects/{name}/members         give a user a role (managers)
    DELETE projects/{name}/members/{id}    take a role back (managers)

Projects the caller may not see answer 404, as on the pages.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import prefetch_related_objects
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import permissions
from annotation.api.items import ProgressOutputSerializer
from annotation.api.pagination import PagePagination
from annotation.models import Membership, Project
from annotation.problems import Problem, ProblemsError, join
from annotation.projects.selectors import project_progress, project_visible_get, projects_with_progress
from annotation.projects.services import membership_add, membership_remove, project_create
from trees.models import Dataset

TAG = ["projects"]
ROLES = Membership.Role.choices


class ProjectOutputSerializer(serializers.Serializer):
    name = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    mode = serializers.ChoiceField(choices=Project.Mode.values)
    dataset = serializers.CharField(source="dataset.name")
    roles = serializers.ListField(
        child=serializers.ChoiceField(choices=ROLES), help_text="The caller's roles in the project."
    )
    progress = ProgressOutputSerializer(help_text="The caller's and the project's progress.")
    created_at = serializers.DateTimeField()


class ProjectDetailOutputSerializer(ProjectOutputSerializer):
    instructions = serializers.CharField(allow_blank=True)
    config = serializers.JSONField(help_text="The configuration as validated and normalised.")
    config_yaml = serializers.CharField(help_text="The configuration as written.")
    updated_at = serializers.DateTimeField()


def _project_data(project: Project, user: Any, progress: Any, serializer: type) -> dict[str, Any]:
    project.roles = sorted(permissions.roles_in(user, project))
    project.progress = progress
    return serializer(project).data


class ProjectsApi(APIView):
    pagination_class = PagePagination

    class ProjectCreateInput(serializers.Serializer):
        name = serializers.CharField(max_length=100, help_text="Letters, digits, - and _ (used in URLs).")
        dataset = serializers.CharField(max_length=100, help_text="The dataset's name.")
        config_yaml = serializers.CharField(
            max_length=1_000_000, help_text="The project's YAML (annotation_schemes, assignment, ...)."
        )
        title = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
        instructions = serializers.CharField(max_length=100_000, required=False, allow_blank=True, default="")
        mode = serializers.ChoiceField(choices=Project.Mode.values, default=Project.Mode.ANNOTATE)

        def validate_name(self, name: str) -> str:
            try:
                Project._meta.get_field("name").run_validators(name)
            except DjangoValidationError as error:
                raise serializers.ValidationError(error.messages) from None
            if Project.objects.filter(name=name).exists():
                raise serializers.ValidationError(f'a project named "{name}" already exists', code="unique")
            return name

        def validate_dataset(self, name: str) -> Dataset:
            dataset = Dataset.objects.filter(name=name).first()
            if dataset is None:
                raise serializers.ValidationError(f'no dataset named "{name}"', code="not_found")
            return dataset

    @extend_schema(tags=TAG, operation_id="projects_list", responses=ProjectOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        """The projects the caller belongs to (admins: all), with the caller's roles and progress."""
        rows = projects_with_progress(user=request.user)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(rows, request, view=self)
        # Each row names its dataset: one query for the page, not one per project.
        prefetch_related_objects([row.project for row in page], "dataset")
        data = [
            _project_data(row.project, request.user, row.progress, ProjectOutputSerializer) for row in page
        ]
        return paginator.get_paginated_response(data)

    @extend_schema(
        tags=TAG,
        operation_id="projects_create",
        request=ProjectCreateInput,
        responses={201: ProjectDetailOutputSerializer},
    )
    def post(self, request: Request) -> Response:
        """A project over a dataset, its YAML checked as in the admin (problems by key path,
        under ``config_yaml``); the dataset's trees become its items."""
        if not permissions.can_create_project(request.user):
            raise PermissionDenied("you may not create projects")
        serializer = self.ProjectCreateInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            project = project_create(**serializer.validated_data)
        except ProblemsError as error:
            raise ProblemsError([_under_config_yaml(problem) for problem in error.problems]) from None
        progress = project_progress(project=project, user=request.user)
        return Response(
            _project_data(project, request.user, progress, ProjectDetailOutputSerializer),
            status=status.HTTP_201_CREATED,
        )


def _under_config_yaml(problem: Problem) -> Problem:
    """A problem of the YAML as a problem of the ``config_yaml`` field: a key path goes under it;
    a syntax error's place in the text (``line 3 column 7``) goes into its message."""
    if problem.code == "yaml":
        return Problem("config_yaml", str(problem), problem.code)
    return Problem(join("config_yaml", problem.path), problem.message, problem.code)


class ProjectDetailApi(APIView):
    @extend_schema(tags=TAG, operation_id="projects_retrieve", responses=ProjectDetailOutputSerializer)
    def get(self, request: Request, name: str) -> Response:
        """The project: its configuration and instructions, the caller's roles and progress."""
        project = project_visible_get(user=request.user, name=name)
        progress = project_progress(project=project, user=request.user)
        return Response(_project_data(project, request.user, progress, ProjectDetailOutputSerializer))


# Members


class MemberOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField(source="user.username")
    role = serializers.ChoiceField(choices=ROLES)
    created_at = serializers.DateTimeField()


class MembersApi(APIView):
    pagination_class = PagePagination

    class MemberCreateInput(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        role = serializers.ChoiceField(choices=ROLES)

        def validate_username(self, username: str) -> Any:
            User = get_user_model()
            user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
            if user is None:
                raise serializers.ValidationError(f'no user named "{username}"', code="not_found")
            return user

    @extend_schema(tags=TAG, operation_id="members_list", responses=MemberOutputSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        """The project's members, a row per role (managers and reviewers)."""
        project = project_visible_get(user=request.user, name=name)
        if not permissions.can_view_members(request.user, project):
            raise PermissionDenied("members are listed for the project's managers and reviewers")
        memberships = Membership.objects.filter(project=project).select_related("user").order_by("pk")
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(memberships, request, view=self)
        return paginator.get_paginated_response(MemberOutputSerializer(page, many=True).data)

    @extend_schema(
        tags=TAG,
        operation_id="members_create",
        request=MemberCreateInput,
        responses={
            201: OpenApiResponse(MemberOutputSerializer, description="The role was given."),
            200: OpenApiResponse(MemberOutputSerializer, description="The user had the role already."),
        },
    )
    def post(self, request: Request, name: str) -> Response:
        """Give a user a role in the project (managers)."""
        project = project_visible_get(user=request.user, name=name)
        if not permissions.can_manage(request.user, project):
            raise PermissionDenied("only the project's managers may change its members")
        serializer = self.MemberCreateInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        user, role = serializer.validated_data["username"], serializer.validated_data["role"]
        existed = Membership.objects.filter(project=project, user=user, role=role).exists()
        membership = membership_add(project=project, user=user, role=role)
        permissions.forget_roles(request.user)
        return Response(
            MemberOutputSerializer(membership).data,
            status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED,
        )


class MemberDetailApi(APIView):
    @extend_schema(tags=TAG, operation_id="members_destroy", responses={204: None})
    def delete(self, request: Request, name: str, membership_id: int) -> Response:
        """Take the role back (managers). The person's answers stay."""
        project = project_visible_get(user=request.user, name=name)
        if not permissions.can_manage(request.user, project):
            raise PermissionDenied("only the project's managers may change its members")
        membership = (
            Membership.objects.filter(pk=membership_id, project=project).select_related("user").first()
        )
        if membership is None:
            raise Http404("no such member of this project")
        membership_remove(project=project, user=membership.user, role=membership.role)
        permissions.forget_roles(request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
