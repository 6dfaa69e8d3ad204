"""The ``suggestions:`` section of a project's YAML: a judge's answers shown to annotators.

    suggestions:
      from: judge:gpt-rubric   # the judge's account (evaluation.llm.judges makes it)
      show: after              # or before

``show: after`` shows the judge's answer to an item only once the annotator has
submitted their own (to measure how often people and the judge agree without
the judge anchoring them); ``show: before`` shows it while they answer, with a
key that copies it into their answers (to speed them up). Which one an answer was
made under is kept with it (``Annotation.suggestion``) and exported.

A config coming in (``parse_config``, every door) must name a judge's account
that exists (``judge_account_check``: one query); a project's saved config, read
back, is not checked again, so a judge's account that goes later simply suggests
nothing. Errors name the key path, like every config error:
``suggestions.show: "during" is not one of after, before``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model

from annotation.problems import Problems, describe, join

SECTION = "suggestions"
KEYS = frozenset({"from", "show"})
SHOW = ("after", "before")
# A judge's account is named ``judge:<name>`` (evaluation.llm.judges.ACCOUNT_PREFIX); annotation
# sits below evaluation, so the prefix is spelled here rather than imported.
JUDGE_PREFIX = "judge:"
# How many judges' names an error lists.
MAX_JUDGES_NAMED = 20


@dataclass(frozen=True)
class SuggestionConfig:
    """Whose answers are suggested (a judge's account name) and when they show; none by default."""

    source: str = ""
    show: str = ""

    @property
    def enabled(self) -> bool:
        return bool(self.source)

    def as_dict(self) -> dict[str, Any] | None:
        return {"from": self.source, "show": self.show} if self.enabled else None


NONE = SuggestionConfig()


def parse_suggestions(raw: Mapping[str, Any], problems: Problems) -> SuggestionConfig:
    """The section's settings, or none; problems are added with their paths."""
    section = raw.get(SECTION)
    if section is None:
        return NONE
    if not isinstance(section, Mapping):
        problems.add(
            SECTION,
            f"must be a mapping with from (judge:NAME) and show (after or before), got {describe(section)}",
        )
        return NONE
    if "workflow" in raw:
        problems.add(
            SECTION, "applies to projects that annotate schemes, not to collection (workflow:) projects"
        )
        return NONE
    problems.check_keys(section, SECTION, KEYS)
    source = section.get("from")
    if source is None:
        problems.add(
            join(SECTION, "from"), "is required: the judge whose answers are suggested, as judge:NAME"
        )
    elif (
        not isinstance(source, str) or not source.startswith(JUDGE_PREFIX) or len(source) == len(JUDGE_PREFIX)
    ):
        shown = f'"{source}"' if isinstance(source, str) else describe(source)
        problems.add(join(SECTION, "from"), f"{shown} is not a judge's account: expected judge:NAME")
        source = None
    show = section.get("show")
    if show is None:
        problems.add(
            join(SECTION, "show"),
            "is required: after (shown once the annotator has answered: to measure, not anchor) "
            "or before (shown while they answer: to speed them up)",
        )
    elif show not in SHOW:
        shown = f'"{show}"' if isinstance(show, str) else describe(show)
        problems.add(join(SECTION, "show"), f"{shown} is not one of {', '.join(SHOW)}")
        show = None
    if not source or not show:
        return NONE
    return SuggestionConfig(source=source, show=show)


def judge_account_check(suggestions: SuggestionConfig, problems: Problems) -> None:
    """The judge named in ``from`` must have an account (one query, only for a config with
    suggestions): a typo would otherwise suggest nothing, silently. Names the judges there are."""
    if not suggestions.enabled:
        return
    judges = sorted(
        get_user_model()
        .objects.filter(username__startswith=JUDGE_PREFIX)
        .values_list("username", flat=True)[:MAX_JUDGES_NAMED]
    )
    if suggestions.source in judges:
        return
    if get_user_model().objects.filter(username=suggestions.source).exists():
        return  # past the names listed
    known = (
        f" (judges: {', '.join(judges)})"
        if judges
        else " (there are no judges yet: make one in the admin first)"
    )
    problems.add(join(SECTION, "from"), f'no judge has the account "{suggestions.source}"{known}')
