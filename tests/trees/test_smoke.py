import pytest

from trees.models import Dataset

pytestmark = pytest.mark.django_db


def test_it_creates_a_dataset():
    assert Dataset.objects.create(name="demo").name == "demo"
