"""Model endpoints, the pace of their requests, and the ledger of every request made."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.utils import timezone

from trees.fields import JSONField

ENV_NAME = RegexValidator(r"^[A-Za-z_][A-Za-z0-9_]*$", "a variable name: letters, digits and _")


class ModelEndpoint(models.Model):
    """Where and how to call a model: an OpenAI-compatible chat-completions server.

    The API key is kept encrypted (``secrets``) or read from an environment variable
    this row names; either way no page, answer or log shows it once saved.
    """

    name = models.SlugField(max_length=100, unique=True, help_text="Used in judges, commands and URLs.")
    base_url = models.URLField(
        "base URL",
        max_length=500,
        help_text="The server's OpenAI-compatible root, e.g. http://127.0.0.1:8000/v1 (vLLM), "
        "http://127.0.0.1:11434/v1 (Ollama), https://api.openai.com/v1.",
    )
    model = models.CharField(max_length=200, help_text="The model's name as the server knows it.")
    api_key_encrypted = models.TextField(blank=True, default="", editable=False)
    api_key_env = models.CharField(
        "API key variable",
        max_length=100,
        blank=True,
        default="",
        validators=[ENV_NAME],
        help_text="Read the key from this environment variable of the web and worker processes "
        "instead of storing it.",
    )
    api_key_set_at = models.DateTimeField(null=True, blank=True, editable=False)
    timeout_seconds = models.FloatField(
        default=60.0,
        validators=[MinValueValidator(1.0), MaxValueValidator(3600.0)],
        help_text="How long one request may take before it counts as failed.",
    )
    max_retries = models.PositiveSmallIntegerField(
        default=2,
        validators=[MaxValueValidator(10)],
        help_text="Retries of a request that failed on the way (connection, timeout, 408, 409, 429, 5xx), "
        "waiting as the server's Retry-After says.",
    )
    max_concurrency = models.PositiveSmallIntegerField(
        default=4,
        validators=[MinValueValidator(1), MaxValueValidator(64)],
        help_text="Requests at once from one worker process.",
    )
    requests_per_minute = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(100_000)],
        help_text="At most this many requests a minute, across every process (empty: no limit).",
    )
    input_price_per_1k = models.DecimalField(
        "price per 1k prompt tokens",
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal(0))],
    )
    output_price_per_1k = models.DecimalField(
        "price per 1k completion tokens",
        max_digits=12,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal(0))],
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "model endpoint"

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"

    @property
    def priced(self) -> bool:
        return self.input_price_per_1k is not None or self.output_price_per_1k is not None

    def cost(self, prompt_tokens: int, completion_tokens: int) -> Decimal | None:
        """What a request of these token counts costs at this endpoint's prices (None: unpriced)."""
        if not self.priced:
            return None
        per_1k = Decimal(1000)
        return (self.input_price_per_1k or Decimal(0)) * prompt_tokens / per_1k + (
            self.output_price_per_1k or Decimal(0)
        ) * completion_tokens / per_1k


class EndpointPace(models.Model):
    """When an endpoint's next request may go: requests per minute kept across processes.

    A row of its own, so that saving the endpoint in the admin never writes over it.
    """

    endpoint = models.OneToOneField(
        ModelEndpoint, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    next_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"next request of endpoint {self.endpoint_id} at {self.next_at:%H:%M:%S.%f}"


class ModelCall(models.Model):
    """One request to a model: what it was for, what it used and cost, and how it ended."""

    class Purpose(models.TextChoices):
        TEST = "test", "connection test"
        GENERATE = "generate", "generation"
        JUDGE = "judge", "judging"

    class Status(models.TextChoices):
        OK = "ok", "answered"
        ERROR = "error", "failed"

    # The ledger outlives the endpoint: the name stays when the row goes.
    endpoint = models.ForeignKey(
        ModelEndpoint, null=True, blank=True, on_delete=models.SET_NULL, related_name="calls", db_index=False
    )
    endpoint_name = models.CharField(max_length=100)
    model = models.CharField(max_length=200)
    purpose = models.CharField(max_length=10, choices=Purpose.choices)
    subject = models.CharField(
        max_length=200, blank=True, default="", help_text="What it served: a judge's name, a generation run."
    )
    job_id = models.BigIntegerField(null=True, blank=True, help_text="The job it ran in, if any.")
    status = models.CharField(max_length=10, choices=Status.choices)
    error = models.TextField(blank=True, default="")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=8, null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["purpose", "subject", "created_at"], name="model_call_subject"),
            models.Index(fields=["job_id"], name="model_call_job"),
            models.Index(fields=["endpoint", "created_at"], name="model_call_endpoint"),
        ]

    def __str__(self) -> str:
        return f"{self.purpose} call to {self.endpoint_name} ({self.status})"


class Judge(models.Model):
    """A model endpoint with a prompt, answering as a coder beside people.

    Its answers are annotations of its own account (``judge:<name>``, which cannot sign in)
    with ``source = model``, so every export, report and agreement figure counts it as a
    coder and can tell it from people. What it judges: a rubric scheme's criteria, yes or
    no with a reason (``rubric``), or a tree scheme's branch comparisons, each pair asked in
    both orders (``comparison``).
    """

    class Kind(models.TextChoices):
        RUBRIC = "rubric", "rubric criteria"
        COMPARISON = "comparison", "branch comparisons"

    name = models.SlugField(max_length=100, unique=True, help_text="Its account is judge:<name>.")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.PROTECT, related_name="judges")
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judge", editable=False
    )
    system_prompt = models.TextField(
        blank=True, default="", help_text="Empty: the built-in one for its kind."
    )
    prompt_template = models.TextField(
        blank=True, default="", help_text="Empty: the built-in template for its kind (see docs/models.md)."
    )
    sampling = JSONField(
        default=dict,
        blank=True,
        help_text='Sent with each request, e.g. {"temperature": 0, "max_tokens": 300}.',
    )
    max_attempts = models.PositiveSmallIntegerField(
        default=3,
        validators=[MinValueValidator(1), MaxValueValidator(10)],
        help_text="Tries per question when the answer cannot be read; then it is recorded as a failure.",
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"judge:{self.name}"


class JudgeVerdict(models.Model):
    """What a judge made of one item of a project for one scheme, beyond the answer itself
    (which is an ``Annotation`` of its account): each question's raw answers (both orders of a
    comparison, and whether they disagreed), the questions it failed with the raw text, and
    its tokens and cost."""

    class Status(models.TextChoices):
        DONE = "done", "answered"
        PARTIAL = "partial", "some questions failed"
        FAILED = "failed", "failed"

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="verdicts")
    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="+")
    tree = models.ForeignKey("trees.ConversationTree", on_delete=models.CASCADE, related_name="+")
    scheme = models.CharField(max_length=100)
    status = models.CharField(max_length=10, choices=Status.choices)
    # Rubric: {"criteria": {key: {"holds": bool, "reason": str}}} (node target: {"nodes": {id:
    # {"criteria": ...}}}); comparison: {"pairs": [{"node", "a", "b", "first", "second", "label",
    # "flipped", "reasons"}]} (first: the label asked a-then-b; second: as answered b-then-a, about
    # b against a; label: the pair's, a tie when flipped; see evaluation.llm.judge_questions).
    details = JSONField(default=dict, blank=True)
    # [{"question": ..., "attempts": n, "error": why, "raw": the model's last text}]
    failures = JSONField(default=list, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=8, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["judge", "project", "tree", "scheme"]
        constraints = [
            models.UniqueConstraint(
                fields=["judge", "project", "tree", "scheme"], name="judge_verdict_unique"
            ),
        ]
        indexes = [models.Index(fields=["project", "scheme"], name="judge_verdict_project")]

    def __str__(self) -> str:
        return f"{self.judge} on {self.tree_id} ({self.scheme}, {self.status})"
