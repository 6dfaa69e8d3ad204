"""The trees admin: who may use it, datasets with their sizes, import and
export through the same services as the commands, and trees drawn whole.

Personas: Alice is a superuser, Bob is staff who may only look at datasets,
Charlie is a signed-in user who is not staff.
"""

from __future__ import annotations

import gzip
import io
import json
import sys
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from tests.factories import ConversationTreeFactory, DatasetFactory, MessageFactory, StaffFactory, UserFactory
from trees.admin import INLINE_MESSAGE_LIMIT
from trees.formats import FORMATS
from trees.formats.jsonstream import decode
from trees.formats.records import visible_metadata
from trees.models import ConversationTree, Dataset, Message
from trees.selectors import MAX_INDENT, tree_outline
from trees.services import tree_import
from trees.store import tree_records

pytestmark = pytest.mark.django_db

DATASET_CHANGELIST = reverse("admin:trees_dataset_changelist")
IMPORT_URL = reverse("admin:trees_dataset_import")
TREE_CHANGELIST = reverse("admin:trees_conversationtree_changelist")
MESSAGE_CHANGELIST = reverse("admin:trees_message_changelist")

# Queries every admin page costs before its own work: the session and the user.
AUTH_QUERIES = 2


# People


@pytest.fixture(autouse=True)
def fast_password_hashing(settings: Any) -> None:
    """Every persona's password is hashed; the production hasher takes a third of a second."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def saved(user: Any) -> Any:
    """``user`` with its password stored.

    The factories set the password after saving and skip the second save, so
    the stored hash is empty and a session made with ``force_login`` (which
    signs it with the password hash) would be refused as stale.
    """
    user.save(update_fields=["password"])
    return user


@pytest.fixture
def alice() -> Any:
    return saved(StaffFactory(username="alice"))


@pytest.fixture
def bob() -> Any:
    """Staff who may view datasets and nothing else."""
    user = saved(UserFactory(username="bob", is_staff=True))
    user.user_permissions.add(Permission.objects.get(codename="view_dataset"))
    return user


@pytest.fixture
def charlie() -> Any:
    return saved(UserFactory(username="charlie", is_staff=False))


@pytest.fixture
def as_alice(client: Client, alice: Any) -> Client:
    client.force_login(alice)
    return client


# Building trees through the import service, as real data arrives


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def import_bytes(dataset: Dataset, data: bytes, format_name: str, **kwargs: Any) -> Any:
    report = tree_import(dataset=dataset, source=io.BytesIO(data), format_name=format_name, **kwargs)
    assert report.committed, [str(issue) for issue in report.errors]
    return report


def flat_lines(messages: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(message) + "\n" for message in messages).encode()


def chain(tree_id: str, length: int) -> bytes:
    """A flat JSONL file of one tree: a single thread ``length`` messages deep."""
    return flat_lines(
        [
            {
                "id": f"n{index}",
                "parent_id": f"n{index - 1}" if index else None,
                "tree_id": tree_id,
                "role": "user" if index % 2 == 0 else "assistant",
                "text": f"message {index}",
            }
            for index in range(length)
        ]
    )


def bushy(tree_id: str, size: int) -> bytes:
    """A flat JSONL file of one tree of ``size`` messages, each with up to three replies."""
    return flat_lines(
        [
            {
                "id": f"n{index}",
                "parent_id": f"n{(index - 1) // 3}" if index else None,
                "tree_id": tree_id,
                "role": "user" if index % 2 == 0 else "assistant",
                "text": f"message {index}",
            }
            for index in range(size)
        ]
    )


XSS = "<script>alert(1)</script>"


def small_tree_item() -> dict[str, Any]:
    """Four messages: the root branches in two, one branch goes on, one text is hostile."""
    return {
        "id": "small",
        "tree": {
            "id": "root",
            "role": "system",
            "content": "Be brief.",
            "children": [
                {
                    "id": "q1",
                    "role": "user",
                    "content": XSS,
                    "children": [{"id": "a1", "role": "assistant", "content": "No.\n\nStill no."}],
                },
                {"id": "q2", "role": "user", "content": "And this?"},
            ],
        },
    }


@pytest.fixture
def seed_bytes(fixture_path: Callable[[str], Path]) -> bytes:
    return fixture_path("potato/seed_conversation.json").read_bytes()


@pytest.fixture
def oasst_bytes(fixture_path: Callable[[str], Path]) -> bytes:
    return fixture_path("oasst/en_10_trees.jsonl").read_bytes()


# Reading pages by their structure


VOID_TAGS = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}


class PageParser(HTMLParser):
    """Collects the outline's tree items, changelist rows and the import report from a page.

    Each tree item keeps its attributes and the text of its labelled parts
    (``role``, ``id``, ``depth``, ``branch``, ``text``, and the message's ``rendered``
    Markdown and exact ``source`` within the text); each changelist row
    maps its ``field-*`` classes to cell text.
    """

    OUTLINE_PARTS = {
        "outline-role": "role",
        "outline-id": "id",
        "outline-depth": "depth",
        "outline-branch": "branch",
        "outline-text": "text",
        "markdown": "rendered",
        "message-source": "source",
    }

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.trees: list[dict[str, str | None]] = []
        self.items: list[dict[str, Any]] = []
        self.rows: list[dict[str, str]] = []
        self.issues: list[str] = []
        self.script_sources: list[str] = []
        self.inline_scripts_in_outline = 0
        self.inline_message_rows = 0
        self._stack: list[tuple[str, str | None]] = []  # (tag, what its text is collected as)
        self._in_outline = 0
        self._in_inline = 0
        self._in_results = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag == "script":
            if attributes.get("src"):
                self.script_sources.append(attributes["src"] or "")
            elif self._in_outline:
                self.inline_scripts_in_outline += 1
        collect: str | None = None
        if attributes.get("role") == "tree":
            self.trees.append(attributes)
        if attributes.get("role") == "treeitem":
            self.items.append({"attrs": attributes, "classes": set(classes), "parts": {}})
        if "tree-outline" in classes:
            self._in_outline += 1
            collect = "+outline"
        if attributes.get("id") == "result_list":
            self._in_results += 1
            collect = "+results"
        if "tabular" in classes and "inline-related" in classes:
            self._in_inline += 1
            collect = "+inline"
        if tag == "tr" and self._in_results:
            self.rows.append({})
        if tag == "tr" and self._in_inline and "form-row" in classes:
            self.inline_message_rows += 1
        if tag in ("td", "th") and self._in_results and self.rows:
            field = next((name[6:] for name in classes if name.startswith("field-")), None)
            if field:
                self.rows[-1][field] = ""
                collect = f"cell:{field}"
        if "import-issue" in classes:
            self.issues.append("")
            collect = "issue"
        part = next((self.OUTLINE_PARTS[name] for name in classes if name in self.OUTLINE_PARTS), None)
        if part and self.items:
            self.items[-1]["parts"][part] = ""
            collect = f"part:{part}"
        if tag not in VOID_TAGS:
            self._stack.append((tag, collect))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID_TAGS:
            return
        while self._stack:
            open_tag, collect = self._stack.pop()
            if collect == "+outline":
                self._in_outline -= 1
            elif collect == "+results":
                self._in_results -= 1
            elif collect == "+inline":
                self._in_inline -= 1
            if open_tag == tag:
                return

    def handle_data(self, data: str) -> None:
        for _, collect in reversed(self._stack):
            if collect is None or collect.startswith("+"):
                continue
            kind, _, name = collect.partition(":")
            if kind == "part":
                self.items[-1]["parts"][name] += data
            elif kind == "cell":
                self.rows[-1][name] += data
            elif kind == "issue":
                self.issues[-1] += data
            return


def parse(response: Any) -> PageParser:
    parser = PageParser()
    parser.feed(response.content.decode())
    parser.close()
    return parser


def outline_summary(page: PageParser) -> list[tuple[str, str, int, int, bool]]:
    """(external id, role, aria-level, children, is marked as a branch point) per tree item."""
    return [
        (
            item["attrs"]["data-external-id"],
            item["attrs"]["data-role"],
            int(item["attrs"]["aria-level"]),
            int(item["attrs"]["data-children"]),
            "outline-branch-point" in item["classes"],
        )
        for item in page.items
    ]


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def import_form(**fields: Any) -> dict[str, Any]:
    return {"id_key": "id", "tree_key": "tree", **fields}


def records_of(dataset: Dataset, *, bookkeeping: bool = True) -> list[tuple[Any, ...]]:
    """A dataset's trees as comparable values: everything an export should carry.

    ``bookkeeping=False`` leaves out the metadata key only Open-Assistant's
    format reads (the keys its file left out), which other formats drop.
    """

    def metadata(value: dict[str, Any]) -> str:
        return json.dumps(value if bookkeeping else visible_metadata(value), sort_keys=True)

    out = []
    for record in tree_records(ConversationTree.objects.filter(dataset=dataset)):
        messages = sorted(
            (
                message.external_id,
                message.parent_id,
                message.role,
                message.text,
                message.lang,
                message.synthetic,
                message.model_name,
                message.review_count,
                message.review_result,
                message.rank,
                message.deleted,
                metadata(message.metadata),
                message.depth,
                message.position,
            )
            for message in record.messages
        )
        out.append((record.external_id, record.state, metadata(record.metadata), messages))
    return sorted(out)


def streamed(response: Any) -> bytes:
    return b"".join(response.streaming_content)


@pytest.fixture
def default_recursion_limit() -> Iterator[None]:
    """Python's default recursion limit for the test.

    Deep imports raise the process's limit (the JSON decoder needs it), which
    would hide recursion in the code under test.
    """
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


# Who may use the admin


ADMIN_PAGES = [DATASET_CHANGELIST, IMPORT_URL, TREE_CHANGELIST, MESSAGE_CHANGELIST]


@pytest.mark.parametrize("url", ADMIN_PAGES)
def test_it_sends_anonymous_visitors_to_the_login_page(client: Client, url: str) -> None:
    response = client.get(url)

    assert response.status_code == 302
    assert response["Location"] == f"{reverse('admin:login')}?next={url}"


@pytest.mark.parametrize("url", ADMIN_PAGES)
def test_it_sends_people_who_are_not_staff_to_the_login_page(client: Client, charlie: Any, url: str) -> None:
    client.force_login(charlie)

    response = client.get(url)

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_it_writes_nothing_for_an_upload_by_someone_who_is_not_staff(
    client: Client, charlie: Any, seed_bytes: bytes
) -> None:
    client.force_login(charlie)

    response = client.post(
        IMPORT_URL,
        import_form(new_dataset="sneaky", file=upload("seed.json", seed_bytes), format_name="potato"),
    )

    assert response.status_code == 302
    assert not Dataset.objects.exists()
    assert not ConversationTree.objects.exists()


def test_it_refuses_the_import_to_staff_who_may_not_add_trees(client: Client, bob: Any) -> None:
    client.force_login(bob)

    changelist = client.get(DATASET_CHANGELIST)

    assert changelist.status_code == 200
    assert b'id="import-trees-link"' not in changelist.content
    assert client.get(IMPORT_URL).status_code == 403


def test_it_links_the_import_page_from_the_dataset_list(as_alice: Client) -> None:
    response = as_alice.get(DATASET_CHANGELIST)

    assert f'href="{IMPORT_URL}" class="addlink" id="import-trees-link"'.encode() in response.content


# Datasets with their sizes


def make_dataset(name: str, tree_sizes: list[int]) -> Dataset:
    dataset = DatasetFactory(name=name)
    for size in tree_sizes:
        tree = ConversationTreeFactory(dataset=dataset)
        root = MessageFactory(tree=tree) if size else None
        for _ in range(size - 1):
            MessageFactory(tree=tree, parent=root, role="assistant")
    return dataset


def dataset_rows(client: Client) -> dict[str, tuple[str, str]]:
    page = parse(client.get(DATASET_CHANGELIST))
    return {row["name"]: (row["tree_count"], row["message_count"]) for row in page.rows if "name" in row}


def test_it_lists_datasets_with_their_tree_and_message_counts(as_alice: Client) -> None:
    make_dataset("alpha", [3, 1, 4])
    make_dataset("beta", [2])
    make_dataset("empty", [])
    make_dataset("hollow", [0, 0])

    assert dataset_rows(as_alice) == {
        "alpha": ("3", "8"),
        "beta": ("1", "2"),
        "empty": ("0", "0"),
        "hollow": ("2", "0"),
    }


# session, user, the count for the paginator and the unfiltered count beside it,
# the page of datasets with both counts as subqueries
DATASET_CHANGELIST_QUERIES = AUTH_QUERIES + 3


@pytest.mark.parametrize("datasets", [1, 8])
def test_the_dataset_list_costs_the_same_queries_for_any_number_of_datasets(
    as_alice: Client, django_assert_num_queries: Any, datasets: int
) -> None:
    for index in range(datasets):
        make_dataset(f"set-{index}", [2] * (index + 1))

    with django_assert_num_queries(DATASET_CHANGELIST_QUERIES):
        response = as_alice.get(DATASET_CHANGELIST)

    assert response.status_code == 200
    assert len(parse(response).rows) == datasets + 1  # and the header row


def test_the_dataset_list_sorts_by_tree_count(as_alice: Client) -> None:
    make_dataset("few", [1])
    make_dataset("many", [1, 1, 1])
    make_dataset("some", [1, 1])

    page = parse(as_alice.get(DATASET_CHANGELIST, {"o": "-2"}))

    assert [row["name"] for row in page.rows if "name" in row] == ["many", "some", "few"]


# Import


def test_the_import_form_offers_every_format(as_alice: Client) -> None:
    response = as_alice.get(IMPORT_URL)

    assert response.status_code == 200
    assert [value for value, _ in response.context["form"].fields["format_name"].choices] == list(FORMATS)


def test_it_imports_a_potato_file_into_a_new_dataset_and_shows_the_summary(
    as_alice: Client, seed_bytes: bytes
) -> None:
    response = as_alice.post(
        IMPORT_URL,
        import_form(new_dataset="seed", file=upload("seed.json", seed_bytes), format_name="potato"),
    )

    dataset = Dataset.objects.get(name="seed")
    assert response.status_code == 302
    assert response["Location"] == f"{TREE_CHANGELIST}?dataset__id__exact={dataset.pk}"
    assert [str(message) for message in get_messages(response.wsgi_request)] == [
        "imported into seed: 1 tree created, 4 messages"
    ]
    tree = dataset.trees.get()
    assert tree.external_id == "conv_001"
    assert sorted(tree.messages.values_list("external_id", flat=True)) == [
        "resp_a",
        "resp_b",
        "root",
        "user_2",
    ]


def test_it_imports_an_oasst_file_into_an_existing_dataset(as_alice: Client, oasst_bytes: bytes) -> None:
    dataset = DatasetFactory(name="oa")
    expected = list(FORMATS["oasst"].read(io.BytesIO(oasst_bytes)))

    response = as_alice.post(
        IMPORT_URL,
        import_form(dataset=dataset.pk, file=upload("trees.jsonl", oasst_bytes), format_name="oasst"),
        follow=True,
    )

    messages_written = sum(len(record.messages) for record in expected)
    assert [str(message) for message in response.context["messages"]] == [
        f"imported into oa: 10 trees created, {messages_written} messages"
    ]
    assert sorted(dataset.trees.values_list("external_id", flat=True)) == sorted(
        record.external_id for record in expected
    )
    assert Message.objects.filter(tree__dataset=dataset).count() == messages_written
    # The page it lands on is the list of the imported trees.
    assert {row["external_id"] for row in parse(response).rows if "external_id" in row} == {
        record.external_id for record in expected
    }


def test_it_imports_a_large_gzipped_upload_from_a_temporary_file(
    as_alice: Client, settings: Any, oasst_bytes: bytes
) -> None:
    # Uploads over this size are spooled to disk instead of kept in memory.
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0

    response = as_alice.post(
        IMPORT_URL,
        import_form(
            new_dataset="zipped",
            file=upload("trees.jsonl.gz", gzip.compress(oasst_bytes)),
            format_name="oasst",
        ),
    )

    assert response.status_code == 302
    assert Dataset.objects.get(name="zipped").trees.count() == 10


def test_it_reads_potato_items_under_the_keys_given(as_alice: Client) -> None:
    item = {"item": "custom", "conversation": small_tree_item()["tree"]}

    as_alice.post(
        IMPORT_URL,
        {
            "new_dataset": "keys",
            "file": upload("custom.json", json.dumps(item).encode()),
            "format_name": "potato",
            "id_key": "item",
            "tree_key": "conversation",
        },
    )

    assert list(ConversationTree.objects.values_list("external_id", flat=True)) == ["custom"]


BAD_POTATO = b"""{"id": "t1", "tree": {"id": "a", "role": "user", "content": "hi", "children": [{"id": "b", "role": "robot", "content": "x"}, {"id": "b", "role": "assistant", "content": "y"}]}}
{"id": "t2", "tree": {"id": "r", "role": "user"}}
{"id": "t3", "tree": {"id": "r", "role": "user", "content": "fine"}}
{"id": "t4", oops}
"""
BAD_POTATO_ERRORS = [
    'line 1: tree.children[0].role: unknown role "robot" '
    "(expected user, assistant, system (or bot, gpt, human, model, prompter))",
    'line 1: tree.children[1]: duplicate node id "b" (first at tree.children[0])',
    'line 2: tree: missing text ("content" or "text")',
    "line 4: malformed JSON at column 14: Expecting property name enclosed in double quotes",
]


def test_a_bad_upload_shows_every_error_and_writes_nothing(as_alice: Client) -> None:
    response = as_alice.post(
        IMPORT_URL,
        import_form(new_dataset="fresh", file=upload("bad.jsonl", BAD_POTATO), format_name="potato"),
    )

    page = parse(response)
    assert response.status_code == 200
    assert page.issues == BAD_POTATO_ERRORS
    assert response.context["report"].summary() == "nothing imported into fresh: 4 errors in 4 items"
    assert b'data-committed="false"' in response.content
    # Not even the dataset it was to create.
    assert not Dataset.objects.exists()
    assert not ConversationTree.objects.exists()
    assert not Message.objects.exists()


def test_an_upload_with_text_that_cannot_be_stored_is_refused_by_line(as_alice: Client) -> None:
    """A lone surrogate is JSON Python reads and no database stores."""
    item = {"id": "t1", "tree": {"id": "r", "role": "user", "content": "\ud800"}}

    response = as_alice.post(
        IMPORT_URL,
        import_form(
            new_dataset="fresh", file=upload("bad.jsonl", json.dumps(item).encode()), format_name="potato"
        ),
    )

    assert response.status_code == 200
    assert parse(response).issues == [
        "line 1: tree.content: contains a lone UTF-16 surrogate (\\ud800), which is not text and cannot be stored"
    ]
    assert not Dataset.objects.exists()


def test_skipping_invalid_items_imports_the_good_ones_and_lists_the_bad(as_alice: Client) -> None:
    dataset = DatasetFactory(name="lenient")

    response = as_alice.post(
        IMPORT_URL,
        import_form(
            dataset=dataset.pk, file=upload("bad.jsonl", BAD_POTATO), format_name="potato", skip_invalid="on"
        ),
    )

    assert response.status_code == 200
    assert parse(response).issues == BAD_POTATO_ERRORS
    assert b'data-committed="true"' in response.content
    assert [str(message) for message in response.context["messages"]] == [
        "imported into lenient: 1 tree created, 1 message, 3 invalid items skipped"
    ]
    assert list(dataset.trees.values_list("external_id", flat=True)) == ["t3"]


def test_it_refuses_trees_the_dataset_has_unless_asked_to_replace_them(
    as_alice: Client, seed_bytes: bytes
) -> None:
    dataset = DatasetFactory(name="seed")
    import_bytes(dataset, seed_bytes, "potato")
    tree_pk = dataset.trees.get().pk
    edited = seed_bytes.replace(b"It's ORDER-12345", b"It's ORDER-99999")

    refused = as_alice.post(
        IMPORT_URL, import_form(dataset=dataset.pk, file=upload("seed.json", edited), format_name="potato")
    )
    replaced = as_alice.post(
        IMPORT_URL,
        import_form(dataset=dataset.pk, file=upload("seed.json", edited), format_name="potato", replace="on"),
    )

    assert parse(refused).issues == [
        'line 1: item "conv_001" already exists in dataset "seed" (import with replace to overwrite it)'
    ]
    assert replaced.status_code == 302
    assert [str(message) for message in get_messages(replaced.wsgi_request)] == [
        "imported into seed: 0 trees created, 1 replaced, 4 messages"
    ]
    tree = dataset.trees.get()
    assert tree.pk == tree_pk
    assert tree.messages.get(external_id="user_2").text == "It's ORDER-99999"


@pytest.mark.parametrize(
    ("fields", "errors"),
    [
        ({}, {"__all__": ["Pick a dataset or name a new one."]}),
        (
            {"dataset": "EXISTING", "new_dataset": "other"},
            {"__all__": ["Pick an existing dataset or name a new one, not both."]},
        ),
        (
            {"new_dataset": "taken"},
            {"new_dataset": ['A dataset named "taken" already exists: pick it above.']},
        ),
        (
            {"new_dataset": "not a slug"},
            {"new_dataset": ["Enter a valid “slug” consisting of letters, numbers, underscores or hyphens."]},
        ),
    ],
)
def test_the_import_form_needs_exactly_one_dataset(
    as_alice: Client, seed_bytes: bytes, fields: dict[str, str], errors: dict[str, list[str]]
) -> None:
    taken = DatasetFactory(name="taken")
    fields = {key: (taken.pk if value == "EXISTING" else value) for key, value in fields.items()}

    response = as_alice.post(
        IMPORT_URL, import_form(file=upload("seed.json", seed_bytes), format_name="potato", **fields)
    )

    assert response.status_code == 200
    assert response.context["form"].errors == errors
    assert Dataset.objects.count() == 1
    assert not ConversationTree.objects.exists()


# Export


@pytest.mark.parametrize(
    ("fixture", "format_name"),
    [("seed_bytes", "potato"), ("seed_bytes", "flat"), ("oasst_bytes", "oasst"), ("oasst_bytes", "potato")],
)
def test_the_export_action_streams_a_dataset_that_reimports_to_the_same_records(
    as_alice: Client, request: pytest.FixtureRequest, fixture: str, format_name: str
) -> None:
    source_format = "potato" if fixture == "seed_bytes" else "oasst"
    original = DatasetFactory(name="original")
    import_bytes(original, request.getfixturevalue(fixture), source_format)

    response = as_alice.post(
        DATASET_CHANGELIST, {"action": f"export_{format_name}", "_selected_action": [original.pk]}
    )

    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "application/x-ndjson; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="original.{format_name}.jsonl"'
    copy = DatasetFactory(name="copy")
    import_bytes(copy, streamed(response), format_name)
    # Potato has no place for Open-Assistant's record of the keys its file
    # left out; everything else comes back.
    same_format = format_name == source_format
    assert records_of(copy, bookkeeping=same_format) == records_of(original, bookkeeping=same_format)


def test_exporting_several_datasets_concatenates_them_into_one_jsonl_file(
    as_alice: Client, seed_bytes: bytes, oasst_bytes: bytes
) -> None:
    seed, oasst = DatasetFactory(name="seed"), DatasetFactory(name="oa")
    import_bytes(seed, seed_bytes, "potato")
    import_bytes(oasst, oasst_bytes, "oasst")

    response = as_alice.post(
        DATASET_CHANGELIST, {"action": "export_oasst", "_selected_action": [seed.pk, oasst.pk]}
    )

    assert response["Content-Disposition"] == 'attachment; filename="2-datasets.oasst.jsonl"'
    lines = streamed(response).decode().splitlines()
    items = [decode(line) for line in lines]
    # Datasets in name order, each one's trees together.
    assert [item["message_tree_id"] for item in items] == [
        *oasst.trees.order_by("pk").values_list("external_id", flat=True),
        "conv_001",
    ]


def test_the_export_actions_cover_every_format(as_alice: Client) -> None:
    DatasetFactory(name="any")

    actions = as_alice.get(DATASET_CHANGELIST).context["action_form"].fields["action"].choices

    assert {name for name, _ in actions} >= {f"export_{name}" for name in FORMATS}
    assert ("export_potato", "Export as potato (JSONL)") in actions
    assert ("export_ccpe", "Export as ccpe (JSON)") in actions


def test_each_download_is_named_and_typed_for_its_format(as_alice: Client) -> None:
    dataset = DatasetFactory(name="corpus")
    import_bytes(dataset, (FIXTURES / "ccpe" / "CCPE-8e113.original.json").read_bytes(), "ccpe")

    response = as_alice.post(DATASET_CHANGELIST, {"action": "export_ccpe", "_selected_action": [dataset.pk]})

    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert 'filename="corpus.ccpe.json"' in response["Content-Disposition"]
    assert json.loads(b"".join(response.streaming_content)) == json.loads(
        (FIXTURES / "ccpe" / "CCPE-8e113.original.json").read_text()
    )


def test_files_that_cannot_be_joined_are_exported_one_dataset_at_a_time(as_alice: Client) -> None:
    first, second = DatasetFactory(name="one"), DatasetFactory(name="two")

    response = as_alice.post(
        DATASET_CHANGELIST, {"action": "export_ccpe", "_selected_action": [first.pk, second.pk]}, follow=True
    )

    assert [str(m) for m in response.context["messages"]] == [
        "ccpe files cannot be joined: export one dataset at a time."
    ]


# The tree page: the whole tree drawn, read-only


def tree_page_url(tree: ConversationTree) -> str:
    return reverse("admin:trees_conversationtree_change", args=[tree.pk])


@pytest.fixture
def small_tree() -> ConversationTree:
    dataset = DatasetFactory(name="small")
    import_bytes(dataset, json.dumps(small_tree_item()).encode(), "potato")
    return dataset.trees.get()


def test_the_tree_page_draws_the_whole_tree_in_preorder(
    as_alice: Client, small_tree: ConversationTree
) -> None:
    page = parse(as_alice.get(tree_page_url(small_tree)))

    assert [tree["aria-label"] for tree in page.trees] == ["small"]
    assert outline_summary(page) == [
        ("root", "system", 1, 2, True),
        ("q1", "user", 2, 1, False),
        ("a1", "assistant", 3, 0, False),
        ("q2", "user", 2, 0, False),
    ]
    root, q1, a1, _ = page.items
    assert root["parts"]["branch"] == "branch: 2 replies"
    assert [item["parts"]["role"] for item in page.items] == ["system", "user", "assistant", "user"]
    assert {"outline-role-system", "outline-indent-0"} <= root["classes"]
    assert {"outline-role-assistant", "outline-indent-2"} <= a1["classes"]
    # In full: rendered as Markdown (two paragraphs), and the exact text as its source (the
    # newline after <pre> is the one a browser's parser drops).
    assert a1["parts"]["rendered"] == "No.\nStill no.\n"
    assert a1["parts"]["source"] == "\nNo.\n\nStill no."
    assert a1["parts"]["depth"] == "depth 2"
    # Collapsible nodes say so; leaves do not claim to be.
    assert [item["attrs"].get("aria-expanded") for item in page.items] == ["true", "true", None, None]
    assert [item["attrs"]["aria-posinset"] for item in page.items] == ["1", "1", "1", "2"]
    assert [item["attrs"]["aria-setsize"] for item in page.items] == ["1", "2", "1", "2"]
    assert [item["attrs"]["tabindex"] for item in page.items] == ["0", "-1", "-1", "-1"]
    assert q1["attrs"]["data-parent-id"] == "root"


def test_the_tree_page_escapes_message_text(as_alice: Client, small_tree: ConversationTree) -> None:
    response = as_alice.get(tree_page_url(small_tree))

    page = parse(response)
    assert page.items[1]["parts"]["rendered"] == XSS + "\n"  # as text, in its Markdown
    assert page.items[1]["parts"]["source"] == "\n" + XSS
    assert XSS.encode() not in response.content
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;" in response.content


def test_the_tree_page_folds_with_a_script_file_and_no_inline_script(
    as_alice: Client, small_tree: ConversationTree
) -> None:
    response = as_alice.get(tree_page_url(small_tree))

    page = parse(response)
    assert "/static/trees/tree_outline.js" in page.script_sources
    assert b'href="/static/trees/tree_outline.css"' in response.content
    assert page.inline_scripts_in_outline == 0
    assert b"onclick" not in response.content


def test_the_tree_page_is_read_only(as_alice: Client, small_tree: ConversationTree) -> None:
    response = as_alice.get(tree_page_url(small_tree))

    assert response.context["adminform"].form.fields == {}  # nothing to edit
    assert not response.context["has_change_permission"]
    assert b'name="_save"' not in response.content
    assert as_alice.post(tree_page_url(small_tree), {"state": "growing"}).status_code == 403
    small_tree.refresh_from_db()
    assert small_tree.state == "ready_for_export"


def test_the_tree_page_lists_a_small_trees_messages_inline(
    as_alice: Client, small_tree: ConversationTree
) -> None:
    response = as_alice.get(tree_page_url(small_tree))

    page = parse(response)
    assert page.inline_message_rows == 4
    formset = response.context["inline_admin_formsets"][0]
    assert not formset.has_add_permission and not formset.has_delete_permission
    assert b'id="tree-messages-note"' not in response.content


def test_a_large_trees_page_links_to_its_messages_instead_of_listing_them(as_alice: Client) -> None:
    dataset = DatasetFactory(name="large")
    import_bytes(dataset, bushy("large", INLINE_MESSAGE_LIMIT + 1), "flat")
    import_bytes(dataset, bushy("other", 3), "flat")
    tree = dataset.trees.get(external_id="large")

    response = as_alice.get(tree_page_url(tree))

    page = parse(response)
    assert response.context["inline_admin_formsets"] == []
    assert page.inline_message_rows == 0
    assert len(page.items) == INLINE_MESSAGE_LIMIT + 1
    link = f"{MESSAGE_CHANGELIST}?tree={tree.pk}"
    assert f'<a href="{link}">see them in the message list</a>'.encode() in response.content
    listed = parse(as_alice.get(link, {"all": ""}))
    assert {row["tree"] for row in listed.rows if "tree" in row} == {"large"}


# session, user, the tree with its message count, the outline's messages
TREE_PAGE_QUERIES = AUTH_QUERIES + 2
# ... and the inline's messages, for trees small enough to list them
TREE_PAGE_QUERIES_WITH_INLINE = TREE_PAGE_QUERIES + 1


@pytest.mark.parametrize(
    ("size", "queries"),
    [
        (4, TREE_PAGE_QUERIES_WITH_INLINE),
        (INLINE_MESSAGE_LIMIT, TREE_PAGE_QUERIES_WITH_INLINE),
        (300, TREE_PAGE_QUERIES),
        (3000, TREE_PAGE_QUERIES),
    ],
)
def test_the_tree_page_costs_the_same_queries_whatever_the_trees_size(
    as_alice: Client, django_assert_num_queries: Any, size: int, queries: int
) -> None:
    dataset = DatasetFactory(name="sized")
    import_bytes(dataset, bushy("sized", size), "flat")
    tree = dataset.trees.get()
    # Django looks content types up once per process: do it before counting.
    ContentType.objects.get_for_models(Dataset, ConversationTree, Message)

    with django_assert_num_queries(queries):
        response = as_alice.get(tree_page_url(tree))

    page = parse(response)
    assert len(page.items) == size
    # In a bushy tree node p has replies 3p+1..3p+3: it branches when 3p+2 exists.
    assert sum(branch for *_, branch in outline_summary(page)) == sum(
        1 for p in range(size) if 3 * p + 2 < size
    )


def test_a_ten_thousand_deep_chain_renders_without_recursion(
    as_alice: Client, django_assert_num_queries: Any, default_recursion_limit: None
) -> None:
    dataset = DatasetFactory(name="deep")
    import_bytes(dataset, chain("deep", 10_000), "flat")
    tree = dataset.trees.get()
    # Django looks content types up once per process: do it before counting.
    ContentType.objects.get_for_models(Dataset, ConversationTree, Message)

    with django_assert_num_queries(TREE_PAGE_QUERIES):
        response = as_alice.get(tree_page_url(tree))

    assert response.status_code == 200
    page = parse(response)
    assert len(page.items) == 10_000
    assert [int(item["attrs"]["aria-level"]) for item in page.items] == list(range(1, 10_001))
    deepest = page.items[-1]
    assert deepest["attrs"]["data-external-id"] == "n9999"
    assert deepest["parts"]["depth"] == "depth 9999"
    # Drawn no further right than the cap, whatever the depth.
    assert f"outline-indent-{MAX_INDENT}" in deepest["classes"]
    assert not any(f"outline-indent-{MAX_INDENT + 1}" in item["classes"] for item in page.items)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_nodes_fold_and_unfold_with_the_mouse_and_the_keyboard(
    live_server: Any, page: Any, sign_in: Callable[..., None], alice: Any, small_tree: ConversationTree
) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, alice)
    page.goto(live_server.url + tree_page_url(small_tree))
    node = {
        external_id: page.locator(f'[role="treeitem"][data-external-id="{external_id}"]')
        for external_id in ("root", "q1", "a1", "q2")
    }

    def focused() -> str:
        return page.evaluate("document.activeElement.dataset.externalId")

    expect(page.locator(".tree-outline-tools")).to_be_visible()  # shown once the script runs
    assert node["a1"].locator(".outline-text").evaluate("e => getComputedStyle(e).whiteSpace") == "pre-wrap"

    node["root"].locator(".outline-toggle").click()
    expect(node["root"]).to_have_attribute("aria-expanded", "false")
    for reply in ("q1", "a1", "q2"):
        expect(node[reply]).to_be_hidden()
    assert focused() == "root"

    page.keyboard.press("ArrowRight")  # unfold
    expect(node["q2"]).to_be_visible()
    page.keyboard.press("ArrowDown")
    assert focused() == "q1"
    page.keyboard.press("ArrowLeft")  # fold q1
    expect(node["q1"]).to_have_attribute("aria-expanded", "false")
    expect(node["a1"]).to_be_hidden()
    page.keyboard.press("ArrowLeft")  # already folded: to the parent
    assert focused() == "root"
    page.keyboard.press("Enter")  # fold the root, then unfold it
    expect(node["q1"]).to_be_hidden()
    page.keyboard.press("Enter")
    # Unfolding the root leaves q1 folded as it was.
    expect(node["q1"]).to_be_visible()
    expect(node["q2"]).to_be_visible()
    expect(node["a1"]).to_be_hidden()
    page.keyboard.press("End")
    assert focused() == "q2"

    page.get_by_role("button", name="Expand all").click()
    expect(node["a1"]).to_be_visible()
    page.get_by_role("button", name="Collapse all").click()
    for reply in ("q1", "a1", "q2"):
        expect(node[reply]).to_be_hidden()
    assert errors == []


# The tree list


def test_the_tree_list_filters_by_dataset_and_state_and_finds_ids_by_prefix(as_alice: Client) -> None:
    one, two = DatasetFactory(name="one"), DatasetFactory(name="two")
    ConversationTreeFactory(dataset=one, external_id="alpha-1", state="growing")
    ConversationTreeFactory(dataset=one, external_id="alpha-2")
    ConversationTreeFactory(dataset=two, external_id="beta-1", state="growing")
    tree = ConversationTreeFactory(dataset=two, external_id="xalpha")
    MessageFactory(tree=tree)

    def ids(**query: Any) -> list[str]:
        page = parse(as_alice.get(TREE_CHANGELIST, query))
        return sorted(row["external_id"] for row in page.rows if "external_id" in row)

    assert ids(dataset__id__exact=one.pk) == ["alpha-1", "alpha-2"]
    assert ids(state__exact="growing") == ["alpha-1", "beta-1"]
    assert ids(q="alpha") == ["alpha-1", "alpha-2"]
    assert ids(q="alpha-2") == ["alpha-2"]
    rows = parse(as_alice.get(TREE_CHANGELIST, {"q": "xalpha"})).rows
    assert [(row["external_id"], row["dataset"], row["message_count"]) for row in rows[1:]] == [
        ("xalpha", "two", "1")
    ]


# session, user, the count for the paginator and the unfiltered count beside
# it, the datasets offered as filters, the page of trees with their message counts
TREE_CHANGELIST_QUERIES = AUTH_QUERIES + 4


@pytest.mark.parametrize(("datasets", "trees_each"), [(1, 1), (4, 6)])
def test_the_tree_list_costs_the_same_queries_for_any_number_of_trees(
    as_alice: Client, django_assert_num_queries: Any, datasets: int, trees_each: int
) -> None:
    for index in range(datasets):
        make_dataset(f"set-{index}", [3] * trees_each)

    with django_assert_num_queries(TREE_CHANGELIST_QUERIES):
        response = as_alice.get(TREE_CHANGELIST)

    rows = [row for row in parse(response).rows if "external_id" in row]
    assert len(rows) == datasets * trees_each
    assert {row["message_count"] for row in rows} == {"3"}


def test_deleting_a_tree_takes_its_messages_with_it(as_alice: Client, small_tree: ConversationTree) -> None:
    other = ConversationTreeFactory(dataset=small_tree.dataset)
    MessageFactory(tree=other)

    response = as_alice.post(
        reverse("admin:trees_conversationtree_delete", args=[small_tree.pk]), {"post": "yes"}
    )

    assert response.status_code == 302
    assert list(ConversationTree.objects.all()) == [other]
    assert list(Message.objects.values_list("tree_id", flat=True)) == [other.pk]


def test_deleting_a_dataset_takes_its_trees_and_messages_with_it(as_alice: Client, seed_bytes: bytes) -> None:
    doomed, kept = DatasetFactory(name="doomed"), DatasetFactory(name="kept")
    import_bytes(doomed, seed_bytes, "potato")
    import_bytes(kept, seed_bytes, "potato")

    response = as_alice.post(
        DATASET_CHANGELIST, {"action": "delete_selected", "_selected_action": [doomed.pk], "post": "yes"}
    )

    assert response.status_code == 302
    assert list(Dataset.objects.all()) == [kept]
    assert Message.objects.filter(tree__dataset=kept).count() == Message.objects.count() == 4


def test_trees_cannot_be_added_in_the_admin(as_alice: Client) -> None:
    assert as_alice.get(reverse("admin:trees_conversationtree_add")).status_code == 403


# Messages


def test_messages_are_read_only(as_alice: Client, small_tree: ConversationTree) -> None:
    message = small_tree.messages.get(external_id="q1")
    url = reverse("admin:trees_message_change", args=[message.pk])

    response = as_alice.get(url)

    assert response.status_code == 200
    assert response.context["adminform"].form.fields == {}
    assert as_alice.get(reverse("admin:trees_message_add")).status_code == 403
    assert as_alice.post(reverse("admin:trees_message_delete", args=[message.pk])).status_code == 403
    # Without delete there is no action left to offer.
    assert as_alice.get(MESSAGE_CHANGELIST).context["action_form"] is None


def test_messages_are_found_by_their_id_or_their_trees_id(
    as_alice: Client, small_tree: ConversationTree
) -> None:
    def found(query: str) -> list[tuple[str, str, str, str]]:
        page = parse(as_alice.get(MESSAGE_CHANGELIST, {"q": query}))
        return sorted(
            (row["tree"], row["external_id"], row["role"], row["depth"]) for row in page.rows if "tree" in row
        )

    assert found("a1") == [("small", "a1", "assistant", "2")]
    assert found("small") == [
        ("small", "a1", "assistant", "2"),
        ("small", "q1", "user", "1"),
        ("small", "q2", "user", "1"),
        ("small", "root", "system", "0"),
    ]
    assert found("a") == []  # exact ids only


# The outline selector, on its own


def test_tree_outline_gives_the_seed_conversation_in_preorder_in_one_query(
    seed_bytes: bytes, django_assert_num_queries: Any
) -> None:
    dataset = DatasetFactory(name="seed")
    import_bytes(dataset, seed_bytes, "potato")
    tree = dataset.trees.get()

    with django_assert_num_queries(1):
        outline = tree_outline(tree)

    assert [
        (row.external_id, row.role, row.depth, row.has_children, row.is_branch_point, row.child_count)
        for row in outline
    ] == [
        ("root", "user", 0, True, True, 2),
        ("resp_a", "assistant", 1, True, False, 1),
        ("user_2", "user", 2, False, False, 0),
        ("resp_b", "assistant", 1, False, False, 0),
    ]
    assert [row.parent_external_id for row in outline] == [None, "root", "resp_a", "root"]
    assert outline[2].text == "It's ORDER-12345"


def test_tree_outline_orders_siblings_by_position_not_by_insertion() -> None:
    tree = ConversationTreeFactory()
    root = MessageFactory(tree=tree, external_id="root")
    MessageFactory(tree=tree, parent=root, external_id="third", position=2)
    MessageFactory(tree=tree, parent=root, external_id="first", position=0)
    second = MessageFactory(tree=tree, parent=root, external_id="second", position=1)
    MessageFactory(tree=tree, parent=second, external_id="under-second")

    outline = tree_outline(tree)

    assert [(row.external_id, row.depth, row.sibling_index, row.sibling_count) for row in outline] == [
        ("root", 0, 0, 1),
        ("first", 1, 0, 3),
        ("second", 1, 1, 3),
        ("under-second", 2, 0, 1),
        ("third", 1, 2, 3),
    ]


def test_tree_outline_of_a_deep_chain_needs_no_recursion(default_recursion_limit: None) -> None:
    dataset = DatasetFactory(name="deep")
    import_bytes(dataset, chain("deep", 5000), "flat")

    outline = tree_outline(dataset.trees.get())

    assert [row.depth for row in outline] == list(range(5000))
    assert outline[-1].indent == MAX_INDENT
    assert not outline[-1].has_children
