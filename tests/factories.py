"""factory_boy factories for every model the tests build."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from trees.models import ConversationTree, Dataset, Message


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.org")
    password = factory.PostGenerationMethodCall("set_password", "correct-horse-battery")


class StaffFactory(UserFactory):
    is_staff = True
    is_superuser = True


class DatasetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Dataset
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"dataset-{n}")


class ConversationTreeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ConversationTree

    dataset = factory.SubFactory(DatasetFactory)
    external_id = factory.Sequence(lambda n: f"conv_{n:03d}")


class MessageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Message

    tree = factory.SubFactory(ConversationTreeFactory)
    parent = None
    external_id = factory.Sequence(lambda n: f"m{n}")
    role = "user"
    text = factory.Faker("sentence")
    depth = factory.LazyAttribute(lambda message: message.parent.depth + 1 if message.parent else 0)
