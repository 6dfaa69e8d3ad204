"""factory_boy factories for every model the tests build."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from trees.models import ConversationTree, Dataset, Message

PASSWORD = "correct-horse-battery"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.org")
    # Hashed before the user is saved, so the stored password works for logins.
    password = factory.django.Password(PASSWORD)


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


class ChainTreeFactory(ConversationTreeFactory):
    """A tree whose messages form one chain, user and assistant taking turns:
    ``ChainTreeFactory(chain=500)`` (3 messages by default), ``m0`` to ``m499``.

    ``replies=2`` ends the chain in a branch point: its last message gets two
    replies, ``m500-1`` and ``m500-2``."""

    class Meta:
        skip_postgeneration_save = True

    @factory.post_generation
    def chain(tree, create, extracted, **kwargs):
        if not create:
            return
        parent = None
        for depth in range(3 if extracted is None else extracted):
            parent = MessageFactory(
                tree=tree,
                parent=parent,
                external_id=f"m{depth}",
                role="user" if depth % 2 == 0 else "assistant",
                text=f"message {depth}",
            )

    @factory.post_generation
    def replies(tree, create, extracted, **kwargs):
        if not create or not extracted:
            return
        last = tree.messages.order_by("-depth").first()
        for place in range(1, extracted + 1):
            MessageFactory(
                tree=tree,
                parent=last,
                external_id=f"m{last.depth + 1}-{place}",
                role="assistant" if last.role == "user" else "user",
                text=f"reply {place} to message {last.depth}",
                position=place - 1,
            )


class PotatoTreeFactory(factory.Factory):
    """A tree read from a Potato item by ``tree_import``, as an upload would be:
    ``PotatoTreeFactory(item={"id": "conv_001", "tree": {...}})``."""

    class Meta:
        model = ConversationTree

    dataset = factory.SubFactory(DatasetFactory)
    item = factory.Sequence(
        lambda n: {"id": f"item_{n:03d}", "tree": {"id": "root", "role": "user", "content": "Hello"}}
    )

    @classmethod
    def _create(cls, model_class, *, dataset, item):
        import io
        import json

        from trees.services import tree_import

        tree_import(dataset=dataset, source=io.BytesIO(json.dumps(item).encode()), format_name="potato")
        return model_class.objects.get(dataset=dataset, external_id=item["id"])


class ProjectFactory(factory.django.DjangoModelFactory):
    """A project made by ``project_create`` (config validated, the dataset's trees made items)."""

    class Meta:
        model = "annotation.Project"

    name = factory.Sequence(lambda n: f"project-{n}")
    dataset = factory.SubFactory(DatasetFactory)
    config_yaml = (
        "annotation_schemes:\n"
        "  - {annotation_type: likert, name: quality, size: 5, min_label: Poor, max_label: Excellent}\n"
    )

    @classmethod
    def _create(cls, model_class, **kwargs):
        from annotation.projects.services import project_create

        return project_create(**kwargs)


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "annotation.Membership"

    project = factory.SubFactory(ProjectFactory)
    user = factory.SubFactory(UserFactory)
    role = "annotator"


class AnnotationFactory(factory.django.DjangoModelFactory):
    """An answer stored as is (no scheme validation): give a payload the project's scheme accepts."""

    class Meta:
        model = "annotation.Annotation"

    project = factory.SubFactory(ProjectFactory)
    tree = factory.SubFactory(ConversationTreeFactory, dataset=factory.SelfAttribute("..project.dataset"))
    user = factory.SubFactory(UserFactory)
    scheme = "quality"
    payload = factory.LazyFunction(lambda: {"rating": 3})
    status = "submitted"
    source = "human"


class AssignmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "annotation.Assignment"

    project = factory.SubFactory(ProjectFactory)
    tree = factory.SubFactory(ConversationTreeFactory, dataset=factory.SelfAttribute("..project.dataset"))
    user = factory.SubFactory(UserFactory)
    status = "submitted"


class PersonaFactory(UserFactory):
    """A named person of service tests, who never signs in with a password:
    ``PersonaFactory(username="alice")`` skips the deliberately slow hashing."""

    password = factory.LazyFunction(lambda: unusable_password())  # saved with the user, no hook


def unusable_password() -> str:
    from django.contrib.auth.hashers import make_password

    return make_password(None)


class CollectProjectFactory(ProjectFactory):
    """A project in collect mode (Open-Assistant's workflow), over a fresh dataset:
    ``CollectProjectFactory(workflow={"goal_tree_size": 4})`` sets ``workflow:`` keys."""

    mode = "collect"
    config_yaml = "workflow: {}\n"

    @classmethod
    def _create(cls, model_class, *, workflow=None, **kwargs):
        if workflow is not None:
            import yaml

            kwargs["config_yaml"] = yaml.safe_dump({"workflow": workflow}, sort_keys=False)
        return super()._create(model_class, **kwargs)


class RubricFactory(factory.django.DjangoModelFactory):
    """A rubric saved by ``rubric_save`` (so with its version 1): ``RubricFactory(yaml=TEXT)``;
    by default two criteria and a fallback outcome."""

    class Meta:
        model = "evaluation.Rubric"

    yaml = factory.Sequence(
        lambda n: (
            f"name: rubric-{n}\n"
            "criteria:\n"
            "  - {key: helpful, question: 'Is the reply helpful?', weight: 0.5}\n"
            "  - {key: polite, question: 'Is the reply polite?', weight: 0.5}\n"
            "outcomes:\n"
            "  - {name: good, min_score: 0.5}\n"
            "  - {name: bad}\n"
        )
    )

    @classmethod
    def _create(cls, model_class, *, yaml):
        from evaluation.services import rubric_save

        return rubric_save(yaml_text=yaml).rubric


class CorpusDatasetFactory(DatasetFactory):
    """A dataset imported from corpus files as an upload would be (all or nothing):
    ``CorpusDatasetFactory(files=[path], format_name="ccpe")``, or ``data=[bytes, ...]``."""

    @classmethod
    def _create(cls, model_class, *, files=(), data=(), format_name="ccpe", **kwargs):
        import io
        from pathlib import Path

        from trees.services import tree_import

        dataset = super()._create(model_class, **kwargs)
        for payload in [Path(path).read_bytes() for path in files] + list(data):
            report = tree_import(dataset=dataset, source=io.BytesIO(payload), format_name=format_name)
            assert report.committed, report.summary()
        return dataset
