"""The audit log: who did what, to what, and when.

Services write it, inside the transaction of the change they make, so that a
page, an API call, the admin and a command doing the same thing leave the
same entry, and a change rolled back leaves none. One INSERT per action
(``audit_record``), or one for a batch of targets (``audit_record_many``).

Who and through what are found, not passed down: ``AuditMiddleware`` keeps
the request in a context variable, and the user is read from it when the
entry is written — after the view (or DRF's token authentication, which sets
the user on the underlying request) has established it. Commands run inside
``audit_context`` (``AuditedCommand`` does that for them), and anything else
is ``system``. A service whose ``user`` argument is the person acting (an
annotator submitting) passes it as ``actor``; one whose ``user`` is the
subject (the owner of a new token, a new member) leaves the actor to be found.

Actions are dotted slugs (``annotation.submit``) that each app registers
with a label (``actions_register``, from its ``AppConfig.ready``); recording
an unregistered one is a programming error and raises.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from django.contrib.auth.models import AbstractBaseUser
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, models
from django.db.models.expressions import RawSQL
from django.http import HttpRequest, HttpResponse

from trees import sql
from trees.models import AuditEntry
from trees.storable import unstorable

Via = AuditEntry.Via
T = TypeVar("T")

_ACTIONS: dict[str, str] = {}


def actions_register(actions: Mapping[str, str]) -> None:
    """Make ``actions`` (slug: label, the label completing "<who> ...") loggable."""
    for slug, label in actions.items():
        if _ACTIONS.get(slug, label) != label:
            raise ValueError(f'audit action "{slug}" is already registered as "{_ACTIONS[slug]}"')
        _ACTIONS[slug] = label


def action_choices() -> list[tuple[str, str]]:
    return sorted(_ACTIONS.items())


def registered_actions() -> frozenset[str]:
    return frozenset(_ACTIONS)


actions_register(
    {
        "dataset.create": "created a dataset",
        "dataset.update": "changed a dataset",
        "dataset.delete": "deleted a dataset",
        "trees.import": "imported trees",
        "trees.export": "exported trees",
        "tree.delete": "deleted a tree",
        "messages.render": "rendered messages' HTML again",
        "replies.add": "added replies to a tree",
    }
)


# -- who, and through what ----------------------------------------------------------------


@dataclass(frozen=True)
class _Context:
    actor: AbstractBaseUser | None
    via: str
    name: str


_request: ContextVar[HttpRequest | None] = ContextVar("audit_request", default=None)
_context: ContextVar[_Context | None] = ContextVar("audit_context", default=None)


class AuditMiddleware:
    """Keeps the request at hand while it is handled, for the entries its services write.

    A streamed response is read after this returns: exports settle who asks
    for them while the view runs (``audit_when_read``).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = _request.set(request)
        try:
            return self.get_response(request)
        finally:
            _request.reset(token)


@contextlib.contextmanager
def audit_context(
    *, actor: AbstractBaseUser | None = None, via: str = Via.COMMAND, name: str = ""
) -> Iterator[None]:
    """Entries written inside are by ``actor`` (or, without one, by ``name``: the command), via ``via``."""
    token = _context.set(_Context(actor, via, name))
    try:
        yield
    finally:
        _context.reset(token)


class TextCommand(BaseCommand):
    """A management command whose arguments are text it may store or look up: one that no
    database can store (a byte the locale could not read as text arrives as a lone
    surrogate, as Python reads ``argv``) is refused (exit code 2) before anything runs,
    except the file paths in ``path_options``, which name files, whatever bytes the file
    system allows.

    Options are taken only as spelled in full: argparse would read an abbreviation as the
    one option it begins (``export_trees --speaker USER=user`` as ``--speaker-column``),
    silently doing something other than what was asked. Every command of the project
    subclasses this one (``tests/test_command_options.py`` walks them)."""

    path_options: frozenset[str] = frozenset({"file", "config", "instructions_file", "output"})

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        return super().create_parser(prog_name, subcommand, **{"allow_abbrev": False, **kwargs})

    def execute(self, *args: Any, **options: Any) -> Any:
        for option, value in [("", value) for value in args] + list(options.items()):
            if option in self.path_options:
                continue
            for text in value if isinstance(value, list | tuple) else [value]:
                if isinstance(text, str) and (found := unstorable(text)):
                    where = f"{option.replace('_', '-')}: " if option else ""
                    raise CommandError(f"{where}{found.message}", returncode=2)
        return super().execute(*args, **options)


class AuditedCommand(TextCommand):
    """A management command whose writes are logged as ``via=command``, by ``manage.py <name>``
    (its arguments checked as ``TextCommand`` checks them)."""

    def execute(self, *args: Any, **options: Any) -> Any:
        name = type(self).__module__.rpartition(".")[2]
        with audit_context(via=Via.COMMAND, name=f"manage.py {name}"):
            return super().execute(*args, **options)


def _via(request: HttpRequest) -> str:
    """The channel, from where config/urls.py mounts the API and the admin."""
    path = request.path_info
    if path.startswith("/api/"):
        return Via.API
    if path.startswith("/admin/"):
        return Via.ADMIN
    return Via.WEB


class _Current:
    def __repr__(self) -> str:
        return "CURRENT"


# The default actor: whoever the request or the command context says is acting.
CURRENT: Any = _Current()


def _who(actor: Any) -> tuple[AbstractBaseUser | None, str, str]:
    """(actor, actor's name, via) for an entry written now."""
    context = _context.get()
    request = _request.get()
    if context is not None:
        via = context.via
    elif request is not None:
        via = _via(request)
    else:
        via = Via.SYSTEM
    if actor is CURRENT:
        if context is not None:
            actor = context.actor
        elif request is not None:
            actor = getattr(request, "user", None)
        else:
            actor = None
    if actor is not None and not getattr(actor, "is_authenticated", False):
        actor = None  # an anonymous visitor acts as nobody in particular
    if actor is not None:
        return actor, actor.get_username(), via
    return None, context.name if context is not None else "", via


# -- what ---------------------------------------------------------------------------------


REPR_CHARS = AuditEntry._meta.get_field("target_repr").max_length


@dataclass(frozen=True)
class Target:
    """A target named without its instance at hand: ``Target(ConversationTree, 12, "t1")``."""

    model: type[models.Model]
    pk: Any
    repr: str | models.Expression

    @classmethod
    def row(cls, model: type[models.Model], pk: Any, field: str) -> Target:
        """The row ``pk`` of ``model``, named by its ``field`` — read by the entry's own INSERT
        (a subquery), so that naming a target whose instance was not loaded costs no query.

        Plain SQL: the ORM would take longer to compile the subquery than the database to run it.
        """
        quote = connection.ops.quote_name
        sql = (
            f"SELECT SUBSTR({quote(model._meta.get_field(field).column)}, 1, {REPR_CHARS})"
            f" FROM {quote(model._meta.db_table)} WHERE {quote(model._meta.pk.column)} = %s"
        )
        return cls(model, pk, RawSQL(sql, [pk], output_field=models.CharField()))


def _target(target: models.Model | Target | None, target_repr: str | None) -> dict[str, Any]:
    if target is None:
        return {"target_type": "", "target_id": "", "target_repr": target_repr or ""}
    if isinstance(target, Target):
        model, pk, shown = target.model, target.pk, target.repr
    else:
        model, pk, shown = type(target), target.pk, None
    if target_repr is not None:
        shown = target_repr
    elif shown is None:
        shown = str(target)
    return {
        "target_type": model._meta.label_lower,
        "target_id": "" if pk is None else str(pk),
        "target_repr": shown[:REPR_CHARS] if isinstance(shown, str) else shown,
    }


def _check(action: str) -> None:
    if action not in _ACTIONS:
        raise ValueError(f'unregistered audit action "{action}" (see trees.audit.actions_register)')


def audit_record(
    action: str,
    *,
    target: models.Model | Target | None = None,
    target_repr: str | None = None,
    scope: str = "",
    details: Mapping[str, Any] | None = None,
    actor: Any = CURRENT,
) -> AuditEntry:
    """Write one entry (one INSERT) in the current transaction.

    ``target_repr`` names the target when ``str(target)`` would read other
    rows; ``scope`` is the project, dataset or person it happened in (what
    people search for); ``details`` says what changed — never a secret.
    """
    _check(action)
    actor, actor_name, via = _who(actor)
    entry = AuditEntry(
        actor=actor,
        actor_name=actor_name,
        via=via,
        action=action,
        scope=scope,
        details=dict(details or {}),
        **_target(target, target_repr),
    )
    # The annotator's loop writes one per request: no query building. A target named by
    # ``Target.row`` is read by the INSERT itself.
    sql.insert([entry])
    return entry


def audit_when_read(
    pieces: Iterable[T],
    action: str,
    *,
    target: models.Model | Target | None = None,
    scope: str = "",
    details: Mapping[str, Any] | None = None,
    actor: Any = CURRENT,
) -> Iterator[T]:
    """``pieces`` (an export's lines), writing the entry when the first is asked for.

    Who acts and through what are settled now, while the request is at hand:
    a streamed response is read after the view (and the middleware) returned.
    So an export still reads and writes nothing until it is read.
    """
    _check(action)
    actor, actor_name, via = _who(actor)
    fields = {"details": dict(details or {}), **_target(target, None)}

    def read() -> Iterator[T]:
        AuditEntry.objects.create(
            actor=actor, actor_name=actor_name, via=via, action=action, scope=scope, **fields
        )
        yield from pieces

    return read()


def audit_record_many(
    action: str,
    targets: Iterable[models.Model | Target],
    *,
    scope: str | Callable[[Any], str] = "",
    details: Mapping[str, Any] | Callable[[Any], Mapping[str, Any]] | None = None,
    actor: Any = CURRENT,
) -> list[AuditEntry]:
    """One entry per target, written in one INSERT; ``scope`` and ``details`` may be
    functions of the target."""
    _check(action)
    actor, actor_name, via = _who(actor)
    entries = [
        AuditEntry(
            actor=actor,
            actor_name=actor_name,
            via=via,
            action=action,
            scope=scope(target) if callable(scope) else scope,
            details=dict((details(target) if callable(details) else details) or {}),
            **_target(target, None),
        )
        for target in targets
    ]
    return AuditEntry.objects.bulk_create(entries) if entries else []


def entries_for(target: models.Model) -> models.QuerySet[AuditEntry]:
    """The entries about ``target``, newest first."""
    return AuditEntry.objects.filter(target_type=target._meta.label_lower, target_id=str(target.pk))
