"""``GET me``: who the caller is, so that an integration can check its token."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import ApiToken


class MeApi(APIView):
    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        is_superuser = serializers.BooleanField()
        token = serializers.CharField(
            allow_null=True, help_text="The token's name, when the request came with one."
        )

    @extend_schema(tags=["tokens"], operation_id="me_retrieve", responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        """Who the caller is: a way for an integration to check its token."""
        token = request.auth if isinstance(request.auth, ApiToken) else None
        return Response(
            {
                "username": request.user.get_username(),
                "is_superuser": request.user.is_superuser,
                "token": token.name if token is not None else None,
            }
        )
