"""A message's rendered HTML is computed once and kept (Message.html, html_version).

The rules:

- Every way a message is written keeps its HTML with it, as the current renderer
  (``trees.markdown.RENDERER_VERSION``) writes it (none for prose, whose HTML is its
  paragraphs, made again on a read): a bulk import (``trees.store``), a
  single save (the collection's prompts and replies, the admin), and a save of the text
  alone; a save of other fields leaves it be.
- Reading a tree's messages renders nothing: the outline reads the kept HTML in its one
  query. A row an older renderer wrote is rendered afresh in memory, never written back
  on a read (a page's queries stay the same).
- ``messages_render`` (``manage.py messages_render``) renders such rows again and keeps
  them, batch by batch, and logs how many; the migration that added the column rendered
  the rows already there.
"""

from __future__ import annotations

import importlib
import io
import json
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection

from annotation.collection.models import Task
from tests.annotation.collection.collect import collect_project, person, prompt, reply, review
from tests.factories import ChainTreeFactory, DatasetFactory, MessageFactory
from trees import markdown
from trees.markdown import RENDERER_VERSION, message_html
from trees.models import AuditEntry, Message
from trees.selectors import tree_outline
from trees.services import messages_render, tree_import

pytestmark = pytest.mark.django_db

REPLY = "Try this:\n\n```python\nfor plant in garden:\n    water(plant)\n```\n\n- daily\n- *gently*"


def kept(message: Message) -> tuple[str, int]:
    message.refresh_from_db()
    return message.html, message.html_version


def test_an_import_keeps_each_messages_html():
    dataset = DatasetFactory()
    item = {"id": "t1", "tree": {"id": "root", "role": "user", "content": "Hi", "children": [
        {"id": "a", "role": "assistant", "content": REPLY},
    ]}}  # fmt: skip
    tree_import(dataset=dataset, source=io.BytesIO(json.dumps(item).encode()), format_name="potato")

    assert dict(Message.objects.values_list("external_id", "html")) == {
        "root": None,
        "a": message_html(REPLY),
    }
    assert set(Message.objects.values_list("html_version", flat=True)) == {RENDERER_VERSION}


def test_a_saved_message_keeps_its_html():
    message = MessageFactory(text=REPLY)

    assert kept(message) == (message_html(REPLY), RENDERER_VERSION)


def test_saving_the_text_alone_renders_it_again():
    message = MessageFactory(text="old")
    message.text = "**new**"
    message.save(update_fields=["text"])

    assert kept(message) == ("<p><strong>new</strong></p>\n", RENDERER_VERSION)


def test_saving_other_fields_leaves_the_html_be(monkeypatch):
    message = MessageFactory(text="**kept**")
    monkeypatch.setattr("trees.models.stored_html", lambda text: pytest.fail("rendered again"))
    message.rank = 2
    message.save(update_fields=["rank"])

    assert kept(message) == ("<p><strong>kept</strong></p>\n", RENDERER_VERSION)


def test_collected_prompts_and_replies_keep_their_html():
    hank, alice, bob, carol = (person(name) for name in ("hank", "alice", "bob", "carol"))
    project = collect_project([hank, alice, bob, carol])
    asked = prompt(project, hank, "How do I *keep* basil alive?")
    review(project, [bob, carol], asked)
    answered = reply(project, alice, asked, REPLY)

    assert kept(asked) == ("<p>How do I <em>keep</em> basil alive?</p>\n", RENDERER_VERSION)
    assert kept(answered) == (message_html(REPLY), RENDERER_VERSION)
    assert Task.objects.filter(created_message=answered).exists()


def test_reading_a_tree_renders_nothing(monkeypatch, django_assert_num_queries):
    tree = ChainTreeFactory(chain=5)
    monkeypatch.setattr(markdown, "message_html", lambda text: pytest.fail("rendered on a read"))

    with django_assert_num_queries(1):
        rows = tree_outline(tree)

    assert [row.html for row in rows] == [f"<p>message {depth}</p>\n" for depth in range(5)]


def test_rows_of_an_older_renderer_are_rendered_on_the_read_and_not_written(django_assert_num_queries):
    tree = ChainTreeFactory(chain=3)
    Message.objects.filter(tree=tree).update(html="<p>stale</p>", html_version=RENDERER_VERSION - 1)

    with django_assert_num_queries(1):
        rows = tree_outline(tree)

    assert [row.html for row in rows] == [f"<p>message {depth}</p>\n" for depth in range(3)]
    assert set(Message.objects.values_list("html", flat=True)) == {"<p>stale</p>"}


def test_messages_render_keeps_the_stale_rows_rendered_again_and_logs_it():
    tree = ChainTreeFactory(chain=5)
    Message.objects.filter(tree=tree, depth__lt=3).update(html="", html_version=0)

    assert messages_render(batch_size=2) == 3

    assert set(Message.objects.values_list("html_version", flat=True)) == {RENDERER_VERSION}
    assert [row.html for row in tree_outline(tree)] == [f"<p>message {depth}</p>\n" for depth in range(5)]
    entry = AuditEntry.objects.get(action="messages.render")
    assert entry.details == {"messages": 3}
    assert messages_render() == 0


def test_the_command_says_how_many_it_rendered(capsys):
    ChainTreeFactory(chain=2)
    Message.objects.update(html_version=0)

    call_command("messages_render")

    assert capsys.readouterr().out == "rendered 2 messages\n"


def test_the_migration_rendered_the_rows_already_there():
    ChainTreeFactory(chain=3)
    Message.objects.update(html="", html_version=0)
    migration = importlib.import_module("trees.migrations.0004_message_html")

    migration.render_existing(apps, SimpleNamespace(connection=connection))

    assert set(Message.objects.values_list("html_version", flat=True)) == {RENDERER_VERSION}
    assert list(Message.objects.values_list("html", flat=True)) == [None, None, None]


def test_prose_keeps_no_copy_and_reads_as_its_paragraphs():
    tree = ChainTreeFactory(chain=1)
    message = MessageFactory(tree=tree, parent=None, external_id="md", text="A *reply*.\n\nSecond.")

    assert kept(Message.objects.get(tree=tree, external_id="m0")) == (None, RENDERER_VERSION)
    assert kept(message)[0] == "<p>A <em>reply</em>.</p>\n<p>Second.</p>\n"
    assert [row.html for row in tree_outline(tree)] == [
        "<p>message 0</p>\n",
        "<p>A <em>reply</em>.</p>\n<p>Second.</p>\n",
    ]
