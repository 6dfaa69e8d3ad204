"""A judge's report in a project: how its answers stand against the people's, and what it cost.

One model judge (``evaluation.llm``) in one project, read from three places:

- the project's agreement figures (``agreement_current``, kept until answers change):
  per scheme and field the judge answered, its confusion table against the people's
  majority, its accuracy (the share of units where it gave the majority's label; ties
  and units fewer than two people answered are left out and counted), its Cohen's κ
  with each person and where its mean falls in the people's range;
- its verdicts in the project (``JudgeVerdict``, one row per item and scheme): items
  answered, in part or not at all, the questions that failed (with the raw text, in
  the admin), tokens and cost, and the position-flip rate of its comparisons — the
  share of pairs whose two orders (a then b, b then a) disagreed, each recorded as a
  tie;
- the ledger (``ModelCall`` with purpose ``judge`` and the judge's name, or its
  account's, as subject):
  every request it made, in every project, failed ones included.

A constant number of queries whatever the project's size: the judge, the figures
(two statements when kept), its verdicts (one), the ledger's sums (one).
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import Any

from django.db.models import Count, Q, Sum
from django.shortcuts import get_object_or_404

from annotation.models import Project
from evaluation.agreement.project import agreement_current
from evaluation.llm.models import Judge, JudgeVerdict, ModelCall

COST_PLACES = Decimal("0.00000001")  # ModelCall.cost's and JudgeVerdict.cost's decimal places


def judge_get(*, name: str) -> Judge:
    """The judge named ``name`` with its endpoint and account, or 404."""
    return get_object_or_404(Judge.objects.select_related("endpoint", "user"), name=name)


def judge_report(*, project: Project, judge: Judge) -> dict[str, Any]:
    """The report's figures as plain JSON data (the page and the API show the same)."""
    account = judge.user.username
    figures = agreement_current(project).figures
    return {
        "project": project.name,
        "judge": judge.name,
        "account": account,
        "kind": judge.kind,
        "endpoint": judge.endpoint.name,
        "model": judge.endpoint.model,
        "computed_at": figures["computed_at"],
        "fields": _fields(figures, account),
        **_verdicts(project, judge),
        "calls": _calls(judge),
    }


def _fields(figures: dict[str, Any], account: str) -> list[dict[str, Any]]:
    """The fields the judge answered, each with its figures against the people."""
    found = []
    for scheme in figures["schemes"]:
        for field in scheme["fields"]:
            judges = field.get("judges")
            mine = [entry for entry in (judges or {}).get("judges", []) if entry["judge"] == account]
            if not mine:
                continue
            (entry,) = mine
            found.append(
                {
                    "scheme": scheme["scheme"],
                    "type": scheme["type"],
                    "field": field["field"],
                    "unit": field["unit"],
                    "values": field["values"],
                    "measure": judges["measure"],
                    "human_range": judges["human_range"],
                    "humans": entry["humans"],
                    "mean": entry["mean"],
                    "position": entry["position"],
                    "within_human_range": entry["within_human_range"],
                    "majority": entry["majority"],
                }
            )
    return found


def _verdicts(project: Project, judge: Judge) -> dict[str, Any]:
    """Verdict counts, failures, tokens and cost, and flips per scheme (one query)."""
    statuses: Counter[str] = Counter()
    failures = prompt = completion = 0
    cost: Decimal | None = None
    pairs: Counter[str] = Counter()
    flipped: Counter[str] = Counter()
    rows = JudgeVerdict.objects.filter(judge=judge, project=project).values_list(
        "scheme", "status", "details", "failures", "prompt_tokens", "completion_tokens", "cost"
    )
    for scheme, status, details, failed, prompt_tokens, completion_tokens, spent in rows:
        statuses[status] += 1
        failures += len(failed) if isinstance(failed, list) else 0
        prompt += prompt_tokens
        completion += completion_tokens
        if spent is not None:
            cost = (cost or Decimal(0)) + spent
        for pair in _pairs(details):
            pairs[scheme] += 1
            flipped[scheme] += pair.get("flipped") is True
    return {
        "verdicts": {
            "items": sum(statuses.values()),
            **{status: statuses[status] for status in JudgeVerdict.Status.values},
            "failures": failures,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cost": _money(cost),
        },
        "flips": {
            **_rate(sum(pairs.values()), sum(flipped.values())),
            "schemes": [
                {"scheme": scheme, **_rate(pairs[scheme], flipped[scheme])} for scheme in sorted(pairs)
            ],
        },
    }


def _money(amount: Decimal | None) -> str | None:
    """A cost as the ledger keeps it, to 8 places (a database's sum may carry more)."""
    return None if amount is None else str(Decimal(amount).quantize(COST_PLACES))


def _pairs(details: Any) -> list[dict[str, Any]]:
    pairs = details.get("pairs") if isinstance(details, dict) else None
    return [pair for pair in pairs if isinstance(pair, dict)] if isinstance(pairs, list) else []


def _rate(pairs: int, flipped: int) -> dict[str, Any]:
    return {"pairs": pairs, "flipped": flipped, "rate": flipped / pairs if pairs else None}


def _calls(judge: Judge) -> dict[str, Any]:
    """The ledger's sums for the judge's requests, in every project (one query)."""
    totals = ModelCall.objects.filter(
        purpose=ModelCall.Purpose.JUDGE, subject__in=[judge.name, judge.user.username]
    ).aggregate(
        requests=Count("id"),
        failed=Count("id", filter=Q(status=ModelCall.Status.ERROR)),
        prompt_tokens=Sum("prompt_tokens"),
        completion_tokens=Sum("completion_tokens"),
        cost=Sum("cost"),
    )
    return {
        "requests": totals["requests"],
        "failed": totals["failed"],
        "prompt_tokens": totals["prompt_tokens"] or 0,
        "completion_tokens": totals["completion_tokens"] or 0,
        "cost": _money(totals["cost"]),
    }
