"""Statistics of evaluation results: outcomes, mean score with a bootstrap interval,
pass rate per criterion, a score histogram, agreement, by group.

Pure functions over plain rows. The 95% interval of the mean is a
percentile bootstrap with a fixed seed, so the same results always give the
same interval. It is computed exactly but cheaply: a rubric's scores take
few distinct values (at most 2^criteria), and resampling n scores with
replacement is the same as drawing how many of each distinct value the
resample holds — a multinomial, drawn as a chain of binomials. A thousand
resamples of 10,000 results then cost a few thousand random draws instead of
ten million.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluation.judgments import criterion_agreement
from evaluation.paths import MISSING

RESAMPLES = 1000
SEED = 20240601
CONFIDENCE = 0.95
BINS = 10
MAX_GROUPS = 20
NO_GROUP = "(none)"


@dataclass(frozen=True, slots=True)
class Row:
    score: float
    outcome: str
    details: Mapping[str, bool]
    group: str | None = None
    votes: Mapping[str, Mapping[str, bool]] | None = None


@dataclass(frozen=True)
class Bin:
    low: float
    high: float
    count: int

    @property
    def label(self) -> str:
        return f"{self.low:.1f}-{self.high:.1f}"


@dataclass(frozen=True)
class Summary:
    count: int
    outcomes: list[tuple[str, int, float]]  # name, count, share (rubric order)
    mean: float | None
    interval: tuple[float, float] | None
    pass_rates: list[tuple[str, int, float | None]]  # key, passed, rate
    histogram: list[Bin]
    agreement: list[tuple[str, float | None, int]] = field(default_factory=list)  # key, mean, units

    def as_json(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "outcomes": [{"name": n, "count": c, "share": s} for n, c, s in self.outcomes],
            "mean_score": self.mean,
            "mean_score_ci95": list(self.interval) if self.interval else None,
            "pass_rates": [{"key": k, "passed": p, "rate": r} for k, p, r in self.pass_rates],
            "histogram": [{"low": b.low, "high": b.high, "count": b.count} for b in self.histogram],
            "agreement": [{"key": k, "observed": a, "units": u} for k, a, u in self.agreement],
        }


@dataclass(frozen=True)
class Report:
    overall: Summary
    groups: list[tuple[str, Summary]]  # empty unless grouped
    group_by: str | None = None
    groups_left_out: int = 0


# -- the bootstrap --------------------------------------------------------------------


def binomial(n: int, p: float, rng: random.Random) -> int:
    """A Binomial(n, p) draw: Devroye's waiting times for small n·p, Hörmann's BTRS otherwise."""
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    if p > 0.5:
        return n - binomial(n, 1.0 - p, rng)
    if n * p < 10.0:
        q = -math.log1p(-p)
        x, total = 0, 0.0
        while True:
            total += -math.log(1.0 - rng.random()) / (n - x)
            if total > q:
                return x
            x += 1
            if x == n:
                return n
    return _btrs(n, p, rng)


def _btrs(n: int, p: float, rng: random.Random) -> int:
    """Transformed rejection with squeeze (Hörmann 1993), for n·p ≥ 10 and p ≤ 0.5."""
    spq = math.sqrt(n * p * (1.0 - p))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    vr = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    lpq = math.log(p / (1.0 - p))
    m = math.floor((n + 1) * p)
    h = math.lgamma(m + 1) + math.lgamma(n - m + 1)
    while True:
        u = rng.random() - 0.5
        us = 0.5 - abs(u)
        k = math.floor((2.0 * a / us + b) * u + c)
        if k < 0 or k > n:
            continue
        v = rng.random()
        if us >= 0.07 and v <= vr:
            return k
        v *= alpha / (a / (us * us) + b)
        if v > 0 and math.log(v) <= h - math.lgamma(k + 1) - math.lgamma(n - k + 1) + (k - m) * lpq:
            return k


def bootstrap_interval(
    scores: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> tuple[float, float] | None:
    """The percentile bootstrap interval of the mean of ``scores`` (None when there are none)."""
    n = len(scores)
    if n == 0:
        return None
    counts = sorted(Counter(scores).items())
    if len(counts) == 1:
        return counts[0][0], counts[0][0]
    rng = random.Random(seed)
    means = []
    for _ in range(resamples):
        left, remaining, total = n, n, 0.0
        for value, count in counts[:-1]:
            drawn = binomial(left, count / remaining, rng) if left else 0
            total += drawn * value
            left -= drawn
            remaining -= count
        total += left * counts[-1][0]
        means.append(total / n)
    means.sort()
    tail = (1.0 - confidence) / 2
    low = means[round(tail * (resamples - 1))]
    high = means[round((1.0 - tail) * (resamples - 1))]
    return round(low, 9), round(high, 9)


# -- summaries -------------------------------------------------------------------------


def histogram(scores: Iterable[float], bins: int = BINS) -> list[Bin]:
    """Counts of scores in ``bins`` equal bins over [0, 1]; a bin holds its low edge, the last holds 1."""
    counts = [0] * bins
    for score in scores:
        counts[min(max(int(score * bins + 1e-9), 0), bins - 1)] += 1
    return [Bin(round(i / bins, 9), round((i + 1) / bins, 9), count) for i, count in enumerate(counts)]


def summarize(rows: Sequence[Row], outcome_names: Sequence[str], keys: Sequence[str]) -> Summary:
    count = len(rows)
    outcomes = Counter(row.outcome for row in rows)
    # Results of an older version may name outcomes the rubric no longer has: listed after.
    names = list(outcome_names) + sorted(set(outcomes) - set(outcome_names))
    scores = [row.score for row in rows]
    passed = Counter(key for row in rows for key, holds in row.details.items() if holds)
    return Summary(
        count=count,
        outcomes=[
            (name, outcomes.get(name, 0), outcomes.get(name, 0) / count if count else 0.0) for name in names
        ],
        mean=round(math.fsum(scores) / count, 9) if count else None,
        interval=bootstrap_interval(scores),
        pass_rates=[(key, passed.get(key, 0), passed.get(key, 0) / count if count else None) for key in keys],
        histogram=histogram(scores),
        agreement=_agreement(rows, keys),
    )


def _agreement(rows: Sequence[Row], keys: Sequence[str]) -> list[tuple[str, float | None, int]]:
    """Mean observed agreement per criterion over the units two or more judges answered."""
    if not any(row.votes for row in rows):
        return []
    found: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        for key, votes in (row.votes or {}).items():
            agreement = criterion_agreement(votes)
            if agreement is not None:
                found[key].append(agreement)
    return [
        (key, round(math.fsum(found[key]) / len(found[key]), 9) if found[key] else None, len(found[key]))
        for key in keys
    ]


def build_report(
    rows: Sequence[Row], outcome_names: Sequence[str], keys: Sequence[str], *, group_by: str | None = None
) -> Report:
    """The overall summary and, with ``group_by``, one per group (the largest ``MAX_GROUPS``)."""
    overall = summarize(rows, outcome_names, keys)
    if group_by is None:
        return Report(overall, [])
    grouped: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        grouped[NO_GROUP if row.group is None else row.group].append(row)
    largest = sorted(grouped, key=lambda name: (-len(grouped[name]), name))[:MAX_GROUPS]
    groups = [(name, summarize(grouped[name], outcome_names, keys)) for name in sorted(largest)]
    return Report(overall, groups, group_by, groups_left_out=len(grouped) - len(largest))


def group_label(value: Any) -> str | None:
    """How a metadata value names its group (None when the key is missing)."""
    if value is None or value is MISSING:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return f"{value:g}"
    return json.dumps(value, sort_keys=True)
