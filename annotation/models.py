"""Projects, the people in them, and their judgements of trees.

An annotator's work on one tree of a project is an ``Assignment`` (the lease
and the item-level state, with the version that guards against stale
writes); what they answered is one ``Annotation`` per scheme. ``ProjectItem``
keeps each tree's counts so that handing out work is one indexed query
whatever the project's size.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import ExpressionWrapper, F, Q
from django.utils import timezone

from trees.fields import JSONField
from trees.models import ConversationTree, Dataset


class Project(models.Model):
    class Mode(models.TextChoices):
        ANNOTATE = "annotate", "annotate (judge existing trees)"
        COLLECT = "collect", "collect (grow trees through tasks)"

    name = models.SlugField(max_length=100, unique=True, help_text="Used on the command line and in URLs.")
    title = models.CharField(max_length=200, blank=True)
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="projects")
    mode = models.CharField(max_length=16, choices=Mode.choices, default=Mode.ANNOTATE)
    config_yaml = models.TextField(
        "configuration (YAML)", help_text="Potato-compatible annotation_schemes plus Branchpoint's own keys."
    )
    # The validated, normalised form of config_yaml; written only by the services.
    config = JSONField(default=dict, editable=False)
    instructions = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.title or self.name


class Membership(models.Model):
    class Role(models.TextChoices):
        MANAGER = "manager"
        ANNOTATOR = "annotator"
        REVIEWER = "reviewer"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user", "role"], name="membership_unique_role"),
        ]
        ordering = ["project_id", "role", "user_id"]

    def __str__(self) -> str:
        return f"{self.user} ({self.role} of {self.project})"


# Items the overlap still has room in: what the hand-out picks from.
OPEN = Q(is_gold=False, is_full=False)


class ProjectItemQuerySet(models.QuerySet["ProjectItem"]):
    def places_change(self, *, overlap: int, active: int = 0, submitted: int = 0) -> int:
        """Add ``active`` to these items' taken places (and ``submitted`` to their submissions),
        keeping ``is_full`` in step with the project's ``overlap`` in the same UPDATE."""
        # SET reads the row as it was: full when the old count plus the change reaches the
        # overlap, always when the change alone does (Django refuses a condition always true).
        full = overlap - active
        changes: dict[str, Any] = {
            "active_count": F("active_count") + active,
            "is_full": ExpressionWrapper(Q(active_count__gte=full), output_field=models.BooleanField())
            if full > 0
            else True,
        }
        if submitted:
            changes["submitted_count"] = F("submitted_count") + submitted
        return self.update(**changes)

    def fullness_sync(self, overlap: int) -> int:
        """Mark these items full or open anew for a changed ``overlap``; returns how many changed."""
        return self.filter(is_full=False, active_count__gte=overlap).update(is_full=True) + self.filter(
            is_full=True, active_count__lt=overlap
        ).update(is_full=False)


class ProjectItem(models.Model):
    """A tree as a unit of work in one project, with the counts hand-out needs."""

    # Not indexed alone: the (project, tree) constraint's index serves lookups by project.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="items", db_index=False)
    tree = models.ForeignKey(ConversationTree, on_delete=models.CASCADE, related_name="project_items")
    # Leases that have not expired plus submissions: what the overlap limits.
    active_count = models.PositiveIntegerField(default=0)
    submitted_count = models.PositiveIntegerField(default=0)
    # active_count has reached the project's overlap. Kept with it (``places_change``) so that
    # the hand-out's indexes hold open items only: without it, each hand-out walked past every
    # full item ahead of the first open one, a walk that grew as the project filled up.
    is_full = models.BooleanField(default=False)
    # A fixed random number per item: "random" order without ORDER BY random().
    shuffle_key = models.FloatField(default=0.0)
    # Gold items have known answers: they are mixed into annotators' queues (and
    # make up the training phase) to measure accuracy, outside the overlap counts.
    is_gold = models.BooleanField("gold", default=False)
    # The expected answers by scheme name, in the shape an annotation's payload has.
    gold_answers = JSONField(default=dict, blank=True)
    # Shown to the annotator after they answer the item in training: why the answer is right.
    gold_explanation = models.TextField(blank=True)

    objects = ProjectItemQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "tree"], name="project_item_unique"),
        ]
        # One per hand-out order (annotation.work.assignment.ORDER_BY), each over the open items
        # the overlap counts: the hand-out walks it in order and stops at the first item the
        # annotator never had (LIMIT 1) instead of sorting every open item.
        indexes = [
            models.Index(fields=["project", "tree"], condition=OPEN, name="item_sequential"),
            models.Index(fields=["project", "shuffle_key", "tree"], condition=OPEN, name="item_random"),
            models.Index(
                fields=["project", "submitted_count", "active_count", "tree"],
                condition=OPEN,
                name="item_fewest",
            ),
            # Gold checks and training pick among a project's gold items only (annotation.quality.gold).
            models.Index(fields=["project", "tree"], condition=models.Q(is_gold=True), name="item_gold"),
        ]

    def __str__(self) -> str:
        return f"{self.tree} in {self.project}"


class Assignment(models.Model):
    """One annotator's work on one item: leased, then submitted or skipped."""

    class Status(models.TextChoices):
        LEASED = "leased"
        SUBMITTED = "submitted"
        SKIPPED = "skipped"
        EXPIRED = "expired"

    # Not indexed alone: the indexes below all lead with the project.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="assignments", db_index=False)
    tree = models.ForeignKey(ConversationTree, on_delete=models.CASCADE, related_name="assignments")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.LEASED)
    leased_at = models.DateTimeField(default=timezone.now)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # Bumped by every write to the item's annotations: a write that names an
    # older version is refused instead of overwriting someone's newer work.
    version = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(default=timezone.now)
    # Time the annotator had the item open, summed over visits (milliseconds):
    # one measure per item, whatever the number of schemes answered.
    time_spent_ms = models.PositiveBigIntegerField(default=0)
    # The annotate page's draft that wrote last ("<page>:<sequence>"), empty after any other
    # write: a page leaving with a save under way sends its last changes at once, based on the
    # same version, and either may arrive first (annotation.work.submissions).
    last_page_save = models.CharField(max_length=48, blank=True, default="")

    class Kind(models.TextChoices):
        WORK = "work"
        GOLD = "gold", "gold check"
        TRAINING = "training"

    class ReviewStatus(models.TextChoices):
        UNREVIEWED = "", "not reviewed"
        ACCEPTED = "accepted"
        REJECTED = "rejected"

    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.WORK)
    # For gold and training work: how well the submitted answers match the expected ones (0..1).
    gold_score = models.FloatField(null=True, blank=True)
    # The latest review's decision (the history is in Review); a rejected item is back in its
    # annotator's queue until they submit it again.
    review_status = models.CharField(max_length=16, choices=ReviewStatus.choices, default="", blank=True)

    class Meta:
        constraints = [
            # User before tree: also the index of a user's work in a project (progress, quota),
            # and the hand-out's probe "did this user have this item?" is one exact lookup.
            models.UniqueConstraint(fields=["project", "user", "tree"], name="assignment_unique"),
        ]
        indexes = [
            # What a user holds or lost to an expired lease, looked for on every hand-out. Only
            # those are in it, so the probe above has one index to use whatever the table's
            # statistics say (a full (project, user, status) index tied with it when they were
            # stale, and the probe read the user's whole history).
            models.Index(
                fields=["project", "user"],
                condition=models.Q(status__in=["leased", "expired"]),
                name="assignment_held",
            ),
            models.Index(fields=["project", "status", "lease_expires_at"], name="assignment_expiry"),
            # A user's latest work: where their walk through the items goes on from
            # (annotation.work.assignment, the hand-out's cursor), one index probe at any history.
            models.Index(fields=["project", "user", "-leased_at", "-id"], name="assignment_latest"),
            # A user's items in their latest activity's order: My work's pages, and the annotate
            # page's Previous and Next (annotation.work.my_work), an index range at any history.
            models.Index(fields=["project", "user", "updated_at", "id"], name="assignment_my_work"),
            # The review queue: a project's submitted work by review status, in item order.
            models.Index(
                fields=["project", "review_status", "status", "tree"], name="assignment_review_queue"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} on {self.tree} ({self.status})"


class AnnotatorProgress(models.Model):
    """One annotator's submitted items in a project, kept with every change: what their progress
    shows on each page, read in one probe instead of counted over their history (which grew
    with it: bench/scale.py). Gold checks count, training does not, as in ``project_progress``.
    Written by ``annotation.projects.counts.annotator_submitted_change`` in the transaction that submits,
    sends back or imports the work."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+", db_index=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    submitted = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="annotator_progress_unique"),
        ]
        verbose_name_plural = "annotator progress"

    def __str__(self) -> str:
        return f"{self.user} in {self.project}: {self.submitted} submitted"


class AnnotationQuerySet(models.QuerySet["Annotation"]):
    """The one place that says which answers are a reference and which are annotators' work."""

    def references(self) -> AnnotationQuerySet:
        """Answers a corpus brought with it (``Annotation.Source.REFERENCE``)."""
        return self.filter(source=Annotation.Source.REFERENCE)

    def of_annotators(self) -> AnnotationQuerySet:
        """Everything but the references: what people (or models, or their imports) answered."""
        return self.exclude(source=Annotation.Source.REFERENCE)


class Annotation(models.Model):
    """An annotator's answer to one scheme of a project for one tree, or a corpus's reference answer."""

    class Status(models.TextChoices):
        DRAFT = "draft"
        SUBMITTED = "submitted"
        SKIPPED = "skipped"

    class Source(models.TextChoices):
        HUMAN = "human"
        IMPORT = "import"
        MODEL = "model"
        # What a corpus says, imported with its trees (annotation.projects.references): not an
        # annotator's judgement. Agreement compares annotators with it instead of counting it as
        # one of them, and exports leave it out unless asked for it.
        REFERENCE = "reference"

    # Not indexed alone: the indexes below all lead with the project.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="annotations", db_index=False)
    tree = models.ForeignKey(ConversationTree, on_delete=models.CASCADE, related_name="annotations")
    # Not indexed alone: annotation_by_user leads with the user.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotations", db_index=False
    )
    scheme = models.CharField(max_length=100)
    payload = JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    version = models.PositiveIntegerField(default=1)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.HUMAN)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Suggestion(models.TextChoices):
        """Whether a judge's suggestion (the project's ``suggestions:``) was visible when the
        answer was made; exports carry it, so answers made with one can be told apart."""

        NONE = "", "no suggestion"
        AFTER = "after", "shown only after answering"
        AFTER_SEEN = "after_seen", "changed after the suggestion was shown"
        BEFORE = "before", "visible while answering"
        BEFORE_TAKEN = "before_taken", "visible, and copied into the answer"

    # Written with the answer by annotation.work.submissions (annotation.work.suggestions says which);
    # empty in the database too, for the writes that name their columns (collection's tasks).
    suggestion = models.CharField(
        max_length=16, choices=Suggestion.choices, default="", db_default="", blank=True
    )

    objects = AnnotationQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "tree", "user", "scheme"], name="annotation_unique"),
        ]
        indexes = [
            models.Index(fields=["project", "status", "updated_at"], name="annotation_by_status"),
            # The user first, not the project: an index on (project, user) would look as good to
            # PostgreSQL as the unique one for "this user's answers to this item" while the
            # table's statistics are missing or stale (all estimates clamp at one row), and it
            # read the user's every answer in the project instead (the submission's lookup).
            models.Index(fields=["user", "updated_at"], name="annotation_by_user"),
        ]

    def __str__(self) -> str:
        return f"{self.scheme} by {self.user} on {self.tree}"

    @property
    def is_reference(self) -> bool:
        """Whether this is a corpus's reference answer rather than an annotator's."""
        return self.source == Annotation.Source.REFERENCE


class Review(models.Model):
    """A reviewer's decision on one annotator's submitted work on one item."""

    class Decision(models.TextChoices):
        ACCEPTED = "accepted"
        REJECTED = "rejected"

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reviews")
    decision = models.CharField(max_length=16, choices=Decision.choices)
    comment = models.TextField(blank=True)
    # The assignment's version the reviewer saw: a decision on older work than the current is refused.
    version = models.PositiveIntegerField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.decision} by {self.reviewer} ({self.assignment})"


class FinalAnswer(models.Model):
    """An item's adjudicated answer: one current version per item, each earlier one in
    ``FinalAnswerRevision``. Written only by ``annotation.review.finals``.

    ``answers`` has the shape of an annotator's answers (scheme name: payload);
    ``provenance`` says where each field came from (``annotation.review.merging``
    names the fields): an annotator's username, ``edited`` or ``auto:majority``.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="finals", db_index=False)
    tree = models.ForeignKey(ConversationTree, on_delete=models.CASCADE, related_name="finals")
    answers = JSONField(default=dict)
    provenance = JSONField(default=dict)
    # Bumped by every save: a save that names an older version is refused (two adjudicators).
    version = models.PositiveIntegerField(default=1)
    # None: the automatic rule (quality.adjudication.auto).
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "tree"], name="final_answer_unique")]

    def __str__(self) -> str:
        return f"final answer to {self.tree} in {self.project} (version {self.version})"


class FinalAnswerRevision(models.Model):
    """A version of a final answer as it was saved: the history kept beside the current one."""

    final = models.ForeignKey(FinalAnswer, on_delete=models.CASCADE, related_name="revisions")
    version = models.PositiveIntegerField()
    answers = JSONField(default=dict)
    provenance = JSONField(default=dict)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["final", "version"], name="final_revision_unique")]
        ordering = ["final_id", "version"]

    def __str__(self) -> str:
        return f"version {self.version} of {self.final_id}"


class ApiToken(models.Model):
    """A secret an integration sends as ``Authorization: Bearer <token>`` to act as ``user``.

    Only a SHA-256 hash of the token is stored: the token itself is shown
    once, when it is made (``annotation.api.tokens.token_create``). ``prefix`` is
    the public part of the token (``bp_<prefix>_<secret>``): it finds the row
    and names the token in lists without revealing it.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What the token is for, e.g. the integration's name.")
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    key_hash = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    # Written at most once a minute per token (see annotation.api.tokens): not a write per request.
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Empty: the token does not expire.")
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} (bp_{self.prefix}_…)"

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


class RateWindow(models.Model):
    """How many API requests one caller made in the current throttle window, by scope.

    One row per (scope, caller), counted up by a single atomic upsert per
    request (``annotation.api.throttling``): the count is shared by every
    worker and host, as a limit has to be. UNLOGGED on PostgreSQL (migration
    0006): no request waits for a WAL flush to count itself.
    """

    key = models.CharField(max_length=200, unique=True)
    window_start = models.BigIntegerField(help_text="In seconds since the epoch.")
    count = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.key}: {self.count} since {self.window_start}"


class UsernameKey(models.Model):
    """The key of an account's username (``annotation.projects.usernames``): the same for names
    that differ only by case, width or look-alike characters (``root``, ``Root``, ``r\\u043e\\u043et``, its
    o's Cyrillic), and unique, so that the database itself refuses a second such account.

    Kept by the receivers of the user's saves (``annotation.receivers``). An account without a
    row is one whose name looked like another's when keys were first made (migration 0009
    reported it; ``manage.py usernames_check`` lists such accounts until they are renamed).
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="username_key"
    )
    key = models.CharField(max_length=600, unique=True)

    class Meta:
        verbose_name = "username key"

    def __str__(self) -> str:
        return self.key
