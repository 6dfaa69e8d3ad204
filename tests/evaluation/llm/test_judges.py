"""Judges and their accounts: ``judge:<name>``, which nobody can sign in as, and no
username typed into a form can take."""

from __future__ import annotations

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import ValidationError
from django.test import RequestFactory

from evaluation.llm.judges import is_judge_account, judge_create, judge_delete
from evaluation.llm.models import Judge
from evaluation.llm.services import endpoint_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoint():
    return endpoint_create(name="local", base_url="http://127.0.0.1:9/v1", model="m")


def test_a_judge_answers_as_an_account_of_its_own_that_cannot_sign_in(endpoint):
    judge = judge_create(name="helpful", kind="rubric", endpoint=endpoint)

    assert judge.user.username == "judge:helpful" and is_judge_account(judge.user)
    assert not judge.user.is_active and not judge.user.has_usable_password()
    assert (
        authenticate(RequestFactory().post("/accounts/login/"), username="judge:helpful", password="") is None
    )


def test_no_person_can_register_a_judges_name():
    form = UserCreationForm(
        {"username": "judge:helpful", "password1": "x7!kQ9#pLm", "password2": "x7!kQ9#pLm"}
    )
    assert "username" in form.errors


def test_two_judges_cannot_share_a_name(endpoint):
    judge_create(name="helpful", kind="rubric", endpoint=endpoint)
    with pytest.raises(ValidationError):
        judge_create(name="helpful", kind="comparison", endpoint=endpoint)
    assert Judge.objects.count() == 1


def test_deleting_a_judge_keeps_its_account(endpoint):
    judge = judge_create(name="helpful", kind="rubric", endpoint=endpoint)
    user = judge.user

    judge_delete(judge=judge)

    user.refresh_from_db()
    assert not Judge.objects.exists() and user.username == "judge:helpful"
