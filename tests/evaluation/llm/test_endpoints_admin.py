"""Model endpoints in the admin, as an admin sets one up.

- The key is typed once: stored encrypted, never shown again (not in the form, the list,
  the history or the audit log); left empty on a change it is kept; it can be removed, or
  read from an environment variable instead.
- "Test connection" (a button on the endpoint's page, an action on the list) sends one short
  request and says what came back, or why nothing did.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from evaluation.llm.keys import endpoint_key
from evaluation.llm.models import ModelCall, ModelEndpoint
from tests.evaluation.llm.chat_server import error
from tests.factories import StaffFactory
from trees.models import AuditEntry

pytestmark = pytest.mark.django_db(transaction=True)
KEY = "sk-admin-typed-0123456789SECRET"


@pytest.fixture
def admin_client() -> Client:
    client = Client()
    client.force_login(StaffFactory(username="root"))
    return client


def form(chat_server: Any, **changes: Any) -> dict[str, Any]:
    data = {
        "name": "local",
        "base_url": chat_server.url,
        "model": "test-model",
        "api_key": KEY,
        "api_key_env": "",
        "timeout_seconds": "5",
        "max_retries": "0",
        "max_concurrency": "4",
        "requests_per_minute": "",
        "input_price_per_1k": "",
        "output_price_per_1k": "",
    }
    return data | changes


def test_a_key_typed_in_the_admin_is_stored_encrypted_and_never_shown_again(admin_client, chat_server):
    added = admin_client.post(reverse("admin:llm_modelendpoint_add"), form(chat_server))
    assert added.status_code == 302, added.content.decode()[:2000]
    endpoint = ModelEndpoint.objects.get(name="local")

    assert endpoint_key(endpoint) == KEY and KEY not in endpoint.api_key_encrypted
    pages = [
        admin_client.get(reverse("admin:llm_modelendpoint_change", args=[endpoint.pk])),
        admin_client.get(reverse("admin:llm_modelendpoint_changelist")),
        admin_client.get(reverse("admin:llm_modelendpoint_history", args=[endpoint.pk])),
        admin_client.get(reverse("admin:trees_auditentry_changelist")),
    ]
    for page in pages:
        assert page.status_code == 200
        assert KEY not in page.content.decode()
    assert "stored encrypted" in pages[0].content.decode()
    entry = AuditEntry.objects.get(action="endpoint.create")
    assert entry.details["api_key"] == "stored" and KEY not in str(entry.details)


def test_a_change_without_a_key_keeps_it_and_clearing_removes_it(admin_client, chat_server):
    admin_client.post(reverse("admin:llm_modelendpoint_add"), form(chat_server))
    endpoint = ModelEndpoint.objects.get(name="local")
    change = reverse("admin:llm_modelendpoint_change", args=[endpoint.pk])

    admin_client.post(change, form(chat_server, api_key="", model="other-model"))
    endpoint.refresh_from_db()
    assert (endpoint.model, endpoint_key(endpoint)) == ("other-model", KEY)
    assert AuditEntry.objects.get(action="endpoint.update").details == {"changed": ["model"]}

    admin_client.post(change, form(chat_server, api_key="", clear_api_key="on"))
    endpoint.refresh_from_db()
    assert endpoint.api_key_encrypted == "" and endpoint_key(endpoint) == ""


def test_a_key_and_a_variable_at_once_are_refused_on_the_form(admin_client, chat_server):
    page = admin_client.post(reverse("admin:llm_modelendpoint_add"), form(chat_server, api_key_env="MY_KEY"))

    assert page.status_code == 200
    assert "give the key, or the variable to read it from, not both" in page.content.decode()
    assert KEY not in page.content.decode()  # the password field is not filled in again
    assert not ModelEndpoint.objects.exists()


def test_test_connection_says_what_the_model_answered(admin_client, chat_server):
    admin_client.post(reverse("admin:llm_modelendpoint_add"), form(chat_server))
    endpoint = ModelEndpoint.objects.get(name="local")
    chat_server.script("OK")

    page = admin_client.post(reverse("admin:llm_modelendpoint_test", args=[endpoint.pk]), follow=True)

    text = page.content.decode()
    assert "Endpoint local: test-model answered in" in text and "“OK”" in text
    assert chat_server.chats[0].body["max_tokens"] == 8
    assert ModelCall.objects.get().purpose == "test"


def test_test_connection_says_why_it_failed_without_the_key(admin_client, chat_server):
    admin_client.post(reverse("admin:llm_modelendpoint_add"), form(chat_server))
    chat_server.script(error(401, f"Incorrect API key provided: {KEY}"))

    page = admin_client.post(
        reverse("admin:llm_modelendpoint_changelist"),
        {"action": "test_connection", "_selected_action": [ModelEndpoint.objects.get().pk]},
        follow=True,
    )

    text = page.content.decode()
    assert "Endpoint local failed (auth): the server refused the API key" in text
    assert KEY not in text


def test_the_ledger_is_read_only(admin_client, chat_server):
    admin_client.post(reverse("admin:llm_modelendpoint_add"), form(chat_server))
    admin_client.post(reverse("admin:llm_modelendpoint_test", args=[ModelEndpoint.objects.get().pk]))
    call = ModelCall.objects.get()

    assert admin_client.get(reverse("admin:llm_modelcall_changelist")).status_code == 200
    assert admin_client.get(reverse("admin:llm_modelcall_add")).status_code == 403
    assert admin_client.post(reverse("admin:llm_modelcall_delete", args=[call.pk])).status_code == 403
