"""A project's webhooks over the API (managers): list, add, change, delete, and each one's
recent deliveries. The secret is written, never read back.

    GET    projects/{name}/webhooks                         the project's webhooks
    POST   projects/{name}/webhooks                         add one: url, secret, events, active
    GET    projects/{name}/webhooks/{id}                    one webhook
    PATCH  projects/{name}/webhooks/{id}                    change url, secret, events or active
    DELETE projects/{name}/webhooks/{id}                    delete it and its deliveries
    GET    projects/{name}/webhooks/{id}/deliveries         its deliveries, newest first

Events, payloads and signatures: docs/webhooks.md.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import permissions
from annotation.api.pagination import PagePagination
from annotation.models import Project
from annotation.projects.selectors import project_visible_get
from annotation.webhooks.events import EVENTS
from annotation.webhooks.models import Delivery, Webhook
from annotation.webhooks.services import MIN_SECRET_LENGTH, webhook_create, webhook_delete, webhook_update

TAG = ["webhooks"]


def managed_project(request: Request, name: str) -> Project:
    project = project_visible_get(user=request.user, name=name)
    if not permissions.can_manage(request.user, project):
        raise PermissionDenied("webhooks are for the project's managers")
    return project


def project_webhook(project: Project, webhook_id: int) -> Webhook:
    webhook = Webhook.objects.filter(pk=webhook_id, project=project).select_related("project").first()
    if webhook is None:
        raise Http404("no such webhook in this project")
    return webhook


class WebhookSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.ChoiceField(choices=list(EVENTS)))
    active = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class WebhookInput(serializers.Serializer):
    url = serializers.URLField(max_length=2000, help_text="http or https.")
    secret = serializers.CharField(
        min_length=MIN_SECRET_LENGTH, max_length=200, write_only=True, help_text="Signs every delivery."
    )
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=list(EVENTS)), min_length=1, max_length=len(EVENTS)
    )
    active = serializers.BooleanField(default=True)


class WebhookChangeInput(serializers.Serializer):
    url = serializers.URLField(max_length=2000, required=False)
    secret = serializers.CharField(
        min_length=MIN_SECRET_LENGTH, max_length=200, write_only=True, required=False
    )
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=list(EVENTS)),
        min_length=1,
        max_length=len(EVENTS),
        required=False,
    )
    active = serializers.BooleanField(required=False)


class WebhooksApi(APIView):
    pagination_class = PagePagination

    @extend_schema(tags=TAG, operation_id="webhooks_list", responses=WebhookSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        """The project's webhooks (managers)."""
        project = managed_project(request, name)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            Webhook.objects.filter(project=project).order_by("pk"), request, self
        )
        return paginator.get_paginated_response(WebhookSerializer(page, many=True).data)

    @extend_schema(
        tags=TAG, operation_id="webhooks_create", request=WebhookInput, responses={201: WebhookSerializer}
    )
    def post(self, request: Request, name: str) -> Response:
        """Subscribe ``url`` to ``events`` of the project; deliveries are signed with ``secret``."""
        project = managed_project(request, name)
        serializer = WebhookInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        webhook = webhook_create(project=project, **serializer.validated_data)
        return Response(WebhookSerializer(webhook).data, status=status.HTTP_201_CREATED)


class WebhookDetailApi(APIView):
    @extend_schema(tags=TAG, operation_id="webhooks_retrieve", responses=WebhookSerializer)
    def get(self, request: Request, name: str, webhook_id: int) -> Response:
        """One webhook (its secret is never shown)."""
        project = managed_project(request, name)
        return Response(WebhookSerializer(project_webhook(project, webhook_id)).data)

    @extend_schema(
        tags=TAG, operation_id="webhooks_update", request=WebhookChangeInput, responses=WebhookSerializer
    )
    def patch(self, request: Request, name: str, webhook_id: int) -> Response:
        """Change what is sent: the fields given change, the others stay."""
        project = managed_project(request, name)
        serializer = WebhookChangeInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        webhook = webhook_update(webhook=project_webhook(project, webhook_id), **serializer.validated_data)
        return Response(WebhookSerializer(webhook).data)

    @extend_schema(tags=TAG, operation_id="webhooks_destroy", responses={204: None})
    def delete(self, request: Request, name: str, webhook_id: int) -> Response:
        """Delete the webhook, with its deliveries."""
        project = managed_project(request, name)
        webhook_delete(webhook=project_webhook(project, webhook_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class DeliverySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    event = serializers.CharField()
    status = serializers.ChoiceField(choices=Delivery.Status.values)
    attempts = serializers.IntegerField()
    response_code = serializers.IntegerField(allow_null=True)
    last_error = serializers.CharField(allow_blank=True)
    next_attempt_at = serializers.DateTimeField()
    created_at = serializers.DateTimeField()
    delivered_at = serializers.DateTimeField(allow_null=True)
    payload = serializers.JSONField(help_text="The body sent, but for its `id`.")


class DeliveriesApi(APIView):
    pagination_class = PagePagination

    @extend_schema(tags=TAG, operation_id="webhooks_deliveries", responses=DeliverySerializer(many=True))
    def get(self, request: Request, name: str, webhook_id: int) -> Response:
        """The webhook's deliveries, newest first: status, attempts, last error."""
        project = managed_project(request, name)
        webhook = project_webhook(project, webhook_id)
        deliveries = Delivery.objects.filter(webhook=webhook).order_by("-created_at", "-pk")
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(deliveries, request, self)
        return paginator.get_paginated_response(DeliverySerializer(page, many=True).data)
