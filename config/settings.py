"""Branchpoint settings, read from the environment.

Every switch has a safe production default except the ones that cannot have
one: SECRET_KEY must be given unless DEBUG is on. A checkout with nothing
configured reads its local settings file instead (var/local.env, written once
by ``make run``: DEBUG=1 and a generated SECRET_KEY); see docs/deploying.md.
"""

import contextlib
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent


def local_settings_read(path: str) -> dict[str, str]:
    """The ``KEY=VALUE`` lines of a local settings file.

    Blank lines and ``#`` comments are skipped; one pair of quotes around a
    value is taken off. A line of another shape is an error naming its place.
    """
    values = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, equals, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if not equals or not key.isidentifier():
            raise ImproperlyConfigured(f"{path} line {number}: expected KEY=VALUE, got {line!r}")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[key] = value
    return values


# A developer's checkout needs nothing exported: ``make run`` writes var/local.env once
# (DEBUG=1, a generated SECRET_KEY) and its values fill in what the environment does not
# give. An environment that gives SECRET_KEY is configured (production, the tests, the
# benchmarks) and no file is read; BRANCHPOINT_LOCAL_ENV names another file, or none when
# empty (the tests set it so, config/test_environment.py).
LOCAL_SETTINGS_FILE = ""  # the file read, if one was
if not env_str("SECRET_KEY"):
    _local = env_str("BRANCHPOINT_LOCAL_ENV", str(BASE_DIR / "var" / "local.env"))
    if _local and Path(_local).is_file():
        LOCAL_SETTINGS_FILE = _local
        os.environ.pop("SECRET_KEY", None)  # given empty is not given
        for _key, _value in local_settings_read(_local).items():
            os.environ.setdefault(_key, _value)

VAR_DIR = Path(env_str("BRANCHPOINT_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set unless DEBUG=1")
    SECRET_KEY = "insecure-development-key-do-not-use-in-production"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    # Swagger UI and Redoc as static files of our own: the API docs need no CDN.
    "drf_spectacular_sidecar",
    "trees",
    "trees.jobs",
    "annotation",
    "annotation.collection",
    "annotation.webhooks",
    "evaluation",
    "evaluation.llm",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "trees.audit.AuditMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def _database() -> dict:
    default_url = f"sqlite:///{VAR_DIR / 'branchpoint.sqlite3'}"
    config = dj_database_url.parse(
        env_str("DATABASE_URL") or default_url,
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
        # A check is a round trip before every request (a tenth of the annotator's loop's
        # statements); without it, a request on a connection the database dropped (a restart)
        # fails once and the connection is replaced. DATABASE_CONN_HEALTH_CHECKS=1 turns it on.
        conn_health_checks=env_bool("DATABASE_CONN_HEALTH_CHECKS", False),
    )
    if config["ENGINE"] == "django.db.backends.sqlite3":
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        config["OPTIONS"] = {
            # WAL lets readers and one writer work at once; IMMEDIATE takes the
            # write lock at BEGIN, so concurrent writers queue instead of
            # failing with "database is locked" when upgrading a read lock.
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
        }
        config["CONN_MAX_AGE"] = 0
    elif config["ENGINE"] == "django.db.backends.postgresql" and env_bool(
        "DATABASE_PREPARED_STATEMENTS", True
    ):
        # Parameters sent apart from the SQL (server-side binding) let psycopg prepare the
        # statements a connection runs again and again, so PostgreSQL plans each once per
        # connection rather than on every call: the annotator's loop runs the same dozen
        # statements per request (bench/api_load.py). Off behind a pooler in transaction mode.
        options = config.setdefault("OPTIONS", {})
        options["server_side_binding"] = True
        options["prepare_threshold"] = env_int("DATABASE_PREPARE_THRESHOLD", 5)
    return config


DATABASES = {"default": _database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "static")))
# whitenoise warns on every request when its root is missing (before collectstatic).
with contextlib.suppress(OSError):
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        # Hashed, compressed files in production (after collectstatic), module
        # imports pointing at the hashed names (config/static_storage.py); plain
        # files straight from the source folders when developing.
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG or not env_bool("STATIC_MANIFEST", True)
        else "config.static_storage.CompressedManifestModuleStorage",
    },
}
WHITENOISE_USE_FINDERS = DEBUG

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 10 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = env_int("FILE_UPLOAD_MAX_MEMORY_SIZE", 10 * 1024 * 1024)

# --- Deployment hardening (docs/security.md) --------------------------------------------
from config.env import env_proxies  # noqa: E402  (here, to keep this block in one piece)

# The client's address, for throttling, the login lockout and anything else that counts
# callers (trees/client_address.py): the connection's, unless BRANCHPOINT_TRUSTED_PROXIES
# names the proxies in front of the site — a count ("1": one proxy, which appends the
# address it saw to X-Forwarded-For) or their addresses and networks ("10.0.0.0/8,
# 192.0.2.7"). Unset: no proxy is trusted and X-Forwarded-For is ignored.
BRANCHPOINT_TRUSTED_PROXIES = env_proxies("BRANCHPOINT_TRUSTED_PROXIES")

# HTTPS. Strict by default in production, off with DEBUG (http://127.0.0.1). HSTS tells
# browsers to use https only, for SECURE_HSTS_SECONDS (a year); preloading is the domain
# owner's commitment, so it is asked for, not assumed. X-Forwarded-Proto is believed only
# from trusted proxies (which set it; the site must be reachable only through them).
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 365 * 24 * 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
if BRANCHPOINT_TRUSTED_PROXIES:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Content-Security-Policy (django-csp): everything from this site only — no inline scripts
# or styles, no plugins, no framing, forms post here. Enforced everywhere, development
# too, so that the browser tests run under it; CSP_REPORT_ONLY=1 sends it as
# Content-Security-Policy-Report-Only instead (to try a change on a live site), and
# CSP_REPORT_URI names where browsers send the violations they see.
INSTALLED_APPS += ["csp"]
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1, "csp.middleware.CSPMiddleware"
)
_CSP = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}
if env_str("CSP_REPORT_URI"):
    _CSP["DIRECTIVES"]["report-uri"] = [env_str("CSP_REPORT_URI")]
if env_bool("CSP_REPORT_ONLY", False):
    CONTENT_SECURITY_POLICY_REPORT_ONLY = _CSP
else:
    CONTENT_SECURITY_POLICY = _CSP

# Login lockout (django-axes): after AXES_FAILURE_LIMIT failed logins within the cool-off,
# the account, and separately the address, are locked for AXES_COOLOFF_MINUTES (0: until an
# admin resets them: ``manage.py axes_reset_username NAME``, ``axes_reset_ip ADDRESS``).
# AXES_LOCKOUT_PARAMETERS lists what is counted, each on its own ("username,ip_address"),
# or together ("username+ip_address"). Every attempt and lockout is kept for the admin.
# A success does not wipe the count (AXES_RESET_ON_SUCCESS=1 would: then a caller with an
# account of their own could clear their address's failures between guesses).
INSTALLED_APPS += ["axes"]
MIDDLEWARE += ["axes.middleware.AxesMiddleware"]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # Django's, keeping each signed-in user for API_AUTH_CACHE_SECONDS (config/session_users.py).
    "config.session_users.KeptUserBackend",
]
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5)
# In hours, as axes reads a float; None (0 minutes) locks until an admin resets.
AXES_COOLOFF_TIME = env_int("AXES_COOLOFF_MINUTES", 15) / 60 or None
AXES_LOCKOUT_PARAMETERS = [
    part.split("+") if "+" in part else part
    for part in env_list("AXES_LOCKOUT_PARAMETERS", ["username", "ip_address"])
]
AXES_RESET_ON_SUCCESS = env_bool("AXES_RESET_ON_SUCCESS", False)
AXES_ENABLE_ACCESS_FAILURE_LOG = True
AXES_CLIENT_IP_CALLABLE = "trees.client_address.client_address"
AXES_LOCKOUT_CALLABLE = "config.lockout.lockout_response"
# Registered by annotation/admin/logins.py instead: read-only, with unlocking audited.
AXES_ENABLE_ADMIN = False

# The JSON API (/api/v1/). Integrations send an API token (``Authorization: Bearer
# <token>``, annotation/api/authentication.py); the pages' scripts use the session,
# with its CSRF token. The token class comes first so that a request with neither
# gets a 401 with ``WWW-Authenticate: Bearer``. Every error has one JSON shape
# (annotation/api/errors.py).
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "annotation.api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["annotation.api.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_THROTTLE_CLASSES": [
        "annotation.api.throttling.UserThrottle",
        "annotation.api.throttling.AnonThrottle",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "annotation.api.errors.exception_handler",
    # ``?format=`` names an export's file format here, not a renderer.
    "URL_FORMAT_OVERRIDE": None,
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}

# The cache: each process's own memory by default, keeping nothing longer than
# PROCESS_CACHE_SECONDS (config/process_cache.py: what another process changed reaches it
# within that time); shared Redis when REDIS_URL is set (Django's RedisCache; needs the
# ``redis`` package). Sessions are read through it (``cached_db``) and kept in the database.
# Per-request work it saves: docs/scaling.md.
if env_str("REDIS_URL"):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": env_str("REDIS_URL"),
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "config.process_cache.ProcessCache",
            "LOCATION": "branchpoint",
            "LONGEST": env_int("PROCESS_CACHE_SECONDS", 60),
            "OPTIONS": {"MAX_ENTRIES": 50_000},
        }
    }
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

# How long each process keeps a project's item counts (items, complete ones) for the
# progress it shows with every item (annotation.projects.counts); 0 counts them every time.
PROGRESS_COUNTS_SECONDS = env_int("PROGRESS_COUNTS_SECONDS", 2)

# How long each process keeps an API caller's token with its user, and a project with the
# caller's roles in it (annotation.recent): the time a revoked token, a deactivated user or a
# removed member may still be served by another process. 0 reads them on every request.
API_AUTH_CACHE_SECONDS = env_int("API_AUTH_CACHE_SECONDS", 1)

# Webhooks (annotation.webhooks, docs/webhooks.md): how long one attempt may take, how many
# attempts a delivery gets, the first retry's delay (doubled after each failure), and the
# hosts webhook URLs may name (empty: any; set it to keep webhooks off the internal network).
BRANCHPOINT_WEBHOOK_TIMEOUT_SECONDS = env_int("BRANCHPOINT_WEBHOOK_TIMEOUT_SECONDS", 5)
BRANCHPOINT_WEBHOOK_MAX_ATTEMPTS = env_int("BRANCHPOINT_WEBHOOK_MAX_ATTEMPTS", 8)
BRANCHPOINT_WEBHOOK_BACKOFF_SECONDS = env_int("BRANCHPOINT_WEBHOOK_BACKOFF_SECONDS", 30)
BRANCHPOINT_WEBHOOK_ALLOWED_HOSTS = env_list("BRANCHPOINT_WEBHOOK_ALLOWED_HOSTS", [])

# How often each process looks for a project's expired leases when handing out items
# (annotation.work.assignment), on PostgreSQL; 0 looks on every hand-out, as SQLite always does.
LEASE_RECLAIM_SECONDS = env_int("LEASE_RECLAIM_SECONDS", 1)

# Requests per caller and window ("N/sec", "N/min", "N/hour", "N/day"; "off" for no
# limit): ``user`` for signed-in callers, ``anon`` per address for the rest, ``loop``
# for the annotator's next/read/draft/submit/skip (a scope of its own, so that an
# annotator's autosaves never starve their other calls). The counts live in the
# database (annotation.models.RateWindow), shared by every worker and host.
API_THROTTLE_RATES = {
    "user": env_str("API_THROTTLE_USER", "600/min"),
    "anon": env_str("API_THROTTLE_ANON", "60/min"),
    "loop": env_str("API_THROTTLE_LOOP", "1200/min"),
}

# Largest request body the API reads: imports (multipart or JSON) up to
# BRANCHPOINT_MAX_UPLOAD_BYTES, every other request up to DATA_UPLOAD_MAX_MEMORY_SIZE;
# larger ones get a 413 before their body is read.
BRANCHPOINT_MAX_UPLOAD_BYTES = env_int("BRANCHPOINT_MAX_UPLOAD_BYTES", 100 * 1024 * 1024)

# What reading a file (an upload, a command's file) may take in, whoever made it
# (trees.formats.bounds): a gzip file's decompressed bytes (ten times the upload limit: JSON
# compresses about that well, a gzip bomb far better), the longest line of JSONL or CSV,
# element of a JSON array or JSON document read whole, and how many levels of arrays and
# objects any JSON value may nest (a conversation tree's own nesting aside: max_depth below).
BRANCHPOINT_MAX_DECOMPRESSED_BYTES = env_int(
    "BRANCHPOINT_MAX_DECOMPRESSED_BYTES", 10 * BRANCHPOINT_MAX_UPLOAD_BYTES
)
BRANCHPOINT_MAX_LINE_BYTES = env_int("BRANCHPOINT_MAX_LINE_BYTES", 64 * 1024 * 1024)
BRANCHPOINT_MAX_JSON_DEPTH = env_int("BRANCHPOINT_MAX_JSON_DEPTH", 100)

# Every YAML the platform reads (project configs, rubrics: annotation.bounded_yaml): how
# many values a document may hold, each alias counted as the values it stands for (a few
# kilobytes of nested aliases stand for billions), how many aliases, and how many levels.
BRANCHPOINT_YAML_MAX_NODES = env_int("BRANCHPOINT_YAML_MAX_NODES", 100_000)
BRANCHPOINT_YAML_MAX_ALIASES = env_int("BRANCHPOINT_YAML_MAX_ALIASES", 1_000)
BRANCHPOINT_YAML_MAX_DEPTH = env_int("BRANCHPOINT_YAML_MAX_DEPTH", 64)

SPECTACULAR_SETTINGS = {
    "TITLE": "Branchpoint API",
    "DESCRIPTION": (
        "Conversation trees in and out, the annotator's loop, annotations and exports. "
        "Authenticate with `Authorization: Bearer <token>` (tokens come from the admin or "
        "`manage.py create_token USER`). Errors are `{code, message, errors?: [{code, path, message}]}`."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "MembershipRoleEnum": "annotation.models.Membership.Role",
        "MessageRoleEnum": "trees.vocabulary.ROLES",
        "AnnotationExportFormatEnum": "annotation.exports.EXPORTS",
        "TreeFormatEnum": "trees.formats.FORMATS",
    },
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "annotation.api.schema.postprocess_error_responses",
    ],
}

# Limits every tree import enforces (the import commands can lower or raise
# them per run).
BRANCHPOINT_IMPORT_LIMITS = {
    "max_text_chars": env_int("BRANCHPOINT_MAX_TEXT_CHARS", 100_000),
    "max_depth": env_int("BRANCHPOINT_MAX_DEPTH", 10_000),
    "max_nodes": env_int("BRANCHPOINT_MAX_NODES", 100_000),
}

# Python checks rubrics may name (``check: {python: NAME}``): name -> dotted path of a
# function (subject) -> bool. A rubric's YAML can only name these, never import code.
BRANCHPOINT_RUBRIC_CHECKS = {
    "booking_confirmed": "evaluation.samples.scheduling.booking_confirmed",
}

# Jobs: long work off the request (trees.jobs, docs/deploying.md). django-tasks' database
# backend by default (workers claim with row locks; SQLite or PostgreSQL), or RQ on Redis with
# BRANCHPOINT_TASKS_BACKEND=rq (REDIS_URL). ``manage.py jobs_worker`` runs either worker.
BRANCHPOINT_TASKS_BACKEND = env_str("BRANCHPOINT_TASKS_BACKEND", "db")
INSTALLED_APPS += ["django_tasks", "django_tasks_db"]
if BRANCHPOINT_TASKS_BACKEND == "rq":
    INSTALLED_APPS += ["django_rq"]
    RQ_QUEUES = {"default": {"URL": env_str("REDIS_URL", "redis://127.0.0.1:6379/0"), "DEFAULT_TIMEOUT": -1}}
    TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": ["default"]}}
elif BRANCHPOINT_TASKS_BACKEND == "immediate":
    # Runs each job inside the request that asked for it: for tests and debugging only.
    TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
elif BRANCHPOINT_TASKS_BACKEND == "db":
    TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
else:
    raise ImproperlyConfigured(
        f"BRANCHPOINT_TASKS_BACKEND={BRANCHPOINT_TASKS_BACKEND!r}: expected db, rq or immediate"
    )
# Uploads above this size are imported by a job (202 Accepted); smaller ones in the request.
BRANCHPOINT_JOB_THRESHOLD_BYTES = env_int("BRANCHPOINT_JOB_THRESHOLD_BYTES", 5 * 1024 * 1024)
# A running job whose heartbeat is older than this lost its worker: the reaper retries it,
# up to BRANCHPOINT_JOB_ATTEMPTS attempts in all, then fails it with the reason.
BRANCHPOINT_JOB_HEARTBEAT_SECONDS = env_int("BRANCHPOINT_JOB_HEARTBEAT_SECONDS", 120)
BRANCHPOINT_JOB_ATTEMPTS = env_int("BRANCHPOINT_JOB_ATTEMPTS", 3)
# Where jobs keep their files (uploads until the job ends, results until they expire).
BRANCHPOINT_JOB_DIR = env_str("BRANCHPOINT_JOB_DIR", str(VAR_DIR / "jobs"))
BRANCHPOINT_JOB_FILE_DAYS = env_int("BRANCHPOINT_JOB_FILE_DAYS", 7)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}
