"""Settings for Jazzmine Studio: embedded defaults, everything overridable by environment."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from .broker import broker_transport
from .env import (
    deployment_name,
    env_bool,
    env_database,
    env_float,
    env_int,
    env_list,
    env_str,
    is_shared_database,
    shared_secret,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("JAZZMINE_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("JAZZMINE_DEBUG", False)

# Databases: the embedded SQLite file, or any URL (PostgreSQL through psycopg 3 and its pool).
DATABASES = {
    "default": env_database(
        "JAZZMINE_DATABASE_URL",
        sqlite_path=Path(env_str("JAZZMINE_DATABASE_PATH", str(VAR_DIR / "jazzmine.sqlite3"))),
        test_suffix=str(os.getpid()),
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
SHARED_DATABASE = is_shared_database(DATABASES["default"])

SECRET_KEY = shared_secret("JAZZMINE_SECRET_KEY", VAR_DIR / "secret_key", shared=SHARED_DATABASE)
# What keeps this deployment's images, containers and Redis keys apart from another's that
# shares the Docker engine or the Redis server (see env.deployment_name).
JAZZMINE_DEPLOYMENT = deployment_name("JAZZMINE_DEPLOYMENT", SECRET_KEY)
ALLOWED_HOSTS = env_list("JAZZMINE_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("JAZZMINE_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "template_partials",
    "jazzmine_web.studio",
    "jazzmine_web.teams",
    "jazzmine_web.workers",
    "jazzmine_web.catalog",
    "jazzmine_web.runs",
    "jazzmine_web.playground",
    "jazzmine_web.scripttools",
    "jazzmine_web.reviews",
    "axes",
]

# The browser security headers of every answer (below), and the Secure mark of its cookies
# over HTTPS. Outermost, reading no body: the refusals made before any view (an oversized body,
# a NUL quoting the field the request named) carry them too, and the static files daphne
# serves outside this stack get the same (`studio.static`).
SECURITY_HEADER_MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Above every middleware that sets a cookie: marks them Secure on an HTTPS request.
    "jazzmine_web.studio.cookies.SecureCookiesOverHttpsMiddleware",
    # The Content-Security-Policy of every page (CONTENT_SECURITY_POLICY below).
    "csp.middleware.CSPMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
MIDDLEWARE = [
    *SECURITY_HEADER_MIDDLEWARE,
    # Then: refuse an oversized body before anything reads it.
    "jazzmine_web.studio.limits.RequestSizeLimitMiddleware",
    # Then: refuse text PostgreSQL cannot hold (NUL) in a path, query or form field.
    "jazzmine_web.studio.untrusted.NulRefusalMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Django's, with an htmx request sent to the login page whole (`studio/login.py`).
    "jazzmine_web.studio.login.StudioLoginRequired",
    "django.contrib.messages.middleware.MessageMiddleware",
    # An empty 405 becomes the API's JSON error under /api/, and a page saying why elsewhere.
    "jazzmine_web.studio.methods.MethodNotAllowedMiddleware",
    # Big code the checker process could not read (killed, out of time): a 503, not a 500.
    "jazzmine_web.studio.unchecked.CheckerUnavailableMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a lockout during login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

# Browser security headers. A reviewer's session approves scripts that then run: text that
# team members, agents, LLMs and running scripts wrote is shown on the pages a reviewer opens,
# always escaped, and if markup ever slipped through the policy still runs no script of it.
# Scripts and styles come from this server's files only: no inline code, no eval (htmx too,
# static/studio/htmx-config.js), no other origin; no page is framed; forms post here only.
# Sockets are same-origin: CSP 3's 'self' matches ws:/wss: of this host and port.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}
X_FRAME_OPTIONS = "DENY"  # frame-ancestors for browsers that predate it
SECURE_CONTENT_TYPE_NOSNIFF = True  # a text/plain or JSON answer is never read as HTML
SECURE_REFERRER_POLICY = "same-origin"  # review and run URLs never leave in a Referer
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"

ROOT_URLCONF = "jazzmine_web.urls"
ASGI_APPLICATION = "jazzmine_web.asgi.application"

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
            "builtins": ["django_htmx.templatetags.django_htmx"],
        },
    }
]

# Redis: the Celery broker and the channel layer. Every process of one deployment names the
# same URL and prefix; a test session takes a prefix of its own (tests/isolation.py).
JAZZMINE_REDIS_URL = env_str("JAZZMINE_REDIS_URL", "redis://127.0.0.1:6379/0")
JAZZMINE_REDIS_PREFIX = env_str("JAZZMINE_REDIS_PREFIX", f"jazzmine-{JAZZMINE_DEPLOYMENT}")
# Blocking reads (the broker's) must not be cut by redis-py's own socket timeout.
JAZZMINE_REDIS_SOCKET_TIMEOUT = env_float("JAZZMINE_REDIS_SOCKET_TIMEOUT", 30.0, above=5.0)
# Live messages go through Redis pub/sub: one PUBLISH a send and pushed to each web process,
# where the list-based layer takes three round trips a send and a blocking pop a receive
# (bench/ab.py: sandbox emit → browser 34.7 → 15.6 ms p50). Pub/sub keeps nothing for a
# process that is reconnecting; every watcher can lose a message without harm: the database
# has each event, a gap is filled from it, and a silence makes the watcher read it.
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
        "CONFIG": {
            "hosts": [
                {
                    "address": JAZZMINE_REDIS_URL,
                    "socket_timeout": JAZZMINE_REDIS_SOCKET_TIMEOUT,
                    "socket_connect_timeout": 5,
                    # Named in CLIENT LIST: an operator (or a test) can tell whose it is.
                    "client_name": f"{JAZZMINE_REDIS_PREFIX}:asgi",
                }
            ],
            "prefix": f"{JAZZMINE_REDIS_PREFIX}:asgi",
        },
    }
}

# Celery: runs, image builds, trials, webhook deliveries and the periodic sweeps run in
# workers (`celery -A jazzmine_web worker`), never in a web process.
CELERY_BROKER_URL = JAZZMINE_REDIS_URL
CELERY_BROKER_TRANSPORT = broker_transport(JAZZMINE_REDIS_URL)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "global_keyprefix": f"{JAZZMINE_REDIS_PREFIX}:celery:",
    # The reaper re-queues runs that never started long before Redis would redeliver.
    "visibility_timeout": 3600,
    "socket_timeout": JAZZMINE_REDIS_SOCKET_TIMEOUT,
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# A task is acknowledged when it ends, and given back if its worker dies: with the claim on
# the row, a redelivered run either runs once or is refused as already claimed.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "jazzmine"
# Threads (runs wait on sandboxes and the database, not on this process's CPU), in a pool
# that answers a cold shutdown (`workers.pool`): no `--pool` on the command line.
CELERY_WORKER_POOL = "jazzmine_web.workers.pool:TaskPool"
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Celery's Django fixup closes a task thread's connections around every task unless this is
# set; the worker does what a request does instead (`close_old_connections`, by CONN_MAX_AGE),
# so a SQLite connection (~15 ms to open) lasts, and a PostgreSQL one goes back to the pool.
CELERY_DB_REUSE_MAX = 2**31
# How long a stopping worker (SIGTERM: a warm shutdown) lets the runs it holds go on before it
# stops them, ending them `worker_lost` with the reason. Its supervisor must wait longer than
# this before it kills the worker (systemd's TimeoutStopSec; honcho, in scripts/run.sh, waits 5 s).
JAZZMINE_WORKER_GRACE_SECONDS = env_float("JAZZMINE_WORKER_GRACE_SECONDS", 30.0, above=0.0)
# How often workers say they are alive, and when the reaper gives up on one that stopped.
JAZZMINE_HEARTBEAT_SECONDS = env_float("JAZZMINE_HEARTBEAT_SECONDS", 5.0, above=0.0)
# At least two beats fit in the timeout, or a live worker's runs would be reaped.
JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS = env_float(
    "JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS", 30.0, above=2 * JAZZMINE_HEARTBEAT_SECONDS
)
# A queued run no worker claimed in this long is queued again (its message may be lost).
JAZZMINE_REQUEUE_AFTER_SECONDS = env_float("JAZZMINE_REQUEUE_AFTER_SECONDS", 60.0, above=0.0)
# Runs a worker executes at once (its Docker host's share); more wait queued.
JAZZMINE_WORKER_CONCURRENCY = env_int("JAZZMINE_WORKER_CONCURRENCY", 4)

# Django's four, as `startproject` sets them: throttling slows guessing one account from one
# address, not a password that is among the first guesses of every list. They judge every
# password a person is given or chooses through a form (the admin) or `createsuperuser`.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
    {"NAME": "jazzmine_web.teams.passwords.NotTheCurrentPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
# daphne serves static files itself unless a proxy in front does it.
JAZZMINE_SERVE_STATIC = env_bool("JAZZMINE_SERVE_STATIC", True)

# Every request body, forms, uploads and the API alike (RequestSizeLimitMiddleware answers 413).
JAZZMINE_MAX_UPLOAD_BYTES = env_int("JAZZMINE_MAX_UPLOAD_BYTES", 2 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = JAZZMINE_MAX_UPLOAD_BYTES
FILE_UPLOAD_MAX_MEMORY_SIZE = DATA_UPLOAD_MAX_MEMORY_SIZE

# Sandboxes
JAZZMINE_BASE_IMAGE = env_str("JAZZMINE_BASE_IMAGE", "jazzmine/base:bookworm")
JAZZMINE_POOL_SIZE = env_int("JAZZMINE_POOL_SIZE", 2)

# Catalog
# Fernet key material for secret values at rest; any string works (it is hashed into a key).
JAZZMINE_SECRETS_KEY = shared_secret(
    "JAZZMINE_SECRETS_KEY", VAR_DIR / "secrets_key", shared=SHARED_DATABASE
)
JAZZMINE_IMPORT_MAX_FILE_BYTES = env_int("JAZZMINE_IMPORT_MAX_FILE_BYTES", 1024 * 1024)

# Catalog walls: what only the operator decides (issue 10, classes 1, 7 and 8).
# Package indexes for `pip download`; empty: pip's own configuration on the host.
JAZZMINE_PIP_INDEX_URL = env_str("JAZZMINE_PIP_INDEX_URL", "")
JAZZMINE_PIP_EXTRA_INDEX_URLS = env_list("JAZZMINE_PIP_EXTRA_INDEX_URLS", [])
# The base images sandboxes may name; the builder refuses any other and pulls only if allowed.
JAZZMINE_BASE_IMAGES = env_list("JAZZMINE_BASE_IMAGES", [JAZZMINE_BASE_IMAGE])
JAZZMINE_BASE_IMAGE_PULL = env_bool("JAZZMINE_BASE_IMAGE_PULL", False)
# What a sandbox's wheels may unpack to (files and directories counted as entries), one wheel
# and all of them: a small download can be a zip bomb that fills the worker's disk.
JAZZMINE_MAX_WHEEL_BYTES = env_int("JAZZMINE_MAX_WHEEL_BYTES", 512 * 1024 * 1024, minimum=1)
JAZZMINE_MAX_WHEEL_ENTRIES = env_int("JAZZMINE_MAX_WHEEL_ENTRIES", 100_000, minimum=1)
JAZZMINE_MAX_SANDBOX_WHEELS_BYTES = env_int(
    "JAZZMINE_MAX_SANDBOX_WHEELS_BYTES", 1024 * 1024 * 1024, minimum=1
)
JAZZMINE_MAX_SANDBOX_WHEELS_ENTRIES = env_int(
    "JAZZMINE_MAX_SANDBOX_WHEELS_ENTRIES", 200_000, minimum=1
)
# Largest sandbox numbers a form accepts; runs clamp stored values to them too.
JAZZMINE_MAX_SANDBOX_MEMORY_MB = env_int("JAZZMINE_MAX_SANDBOX_MEMORY_MB", 4096)
JAZZMINE_MAX_SANDBOX_CPUS = env_float("JAZZMINE_MAX_SANDBOX_CPUS", 4.0)
JAZZMINE_MAX_SANDBOX_PIDS = env_int("JAZZMINE_MAX_SANDBOX_PIDS", 1024)
JAZZMINE_MAX_SANDBOX_TIMEOUT_SECONDS = env_float("JAZZMINE_MAX_SANDBOX_TIMEOUT_SECONDS", 600.0)
JAZZMINE_MAX_SANDBOX_OUTPUT_BYTES = env_int("JAZZMINE_MAX_SANDBOX_OUTPUT_BYTES", 50 * 1024 * 1024)
# Events one run may send (each is a stored row and a message to its watchers).
JAZZMINE_MAX_RUN_EVENTS = env_int("JAZZMINE_MAX_RUN_EVENTS", 100_000)
if JAZZMINE_MAX_RUN_EVENTS < 10:
    raise ImproperlyConfigured("JAZZMINE_MAX_RUN_EVENTS must be at least 10")
JAZZMINE_MAX_BASH_COMMANDS = env_int("JAZZMINE_MAX_BASH_COMMANDS", 1_000_000)
JAZZMINE_MAX_BASH_LOOP_ITERATIONS = env_int("JAZZMINE_MAX_BASH_LOOP_ITERATIONS", 1_000_000)
JAZZMINE_MAX_BASH_TIMEOUT_SECONDS = env_float("JAZZMINE_MAX_BASH_TIMEOUT_SECONDS", 600.0)
JAZZMINE_MAX_SCRIPT_TOOL_TIMEOUT_SECONDS = env_float(
    "JAZZMINE_MAX_SCRIPT_TOOL_TIMEOUT_SECONDS", 600.0
)

# LLM (any OpenAI-compatible chat-completions endpoint)
JAZZMINE_LLM_BASE_URL = env_str("JAZZMINE_LLM_BASE_URL", "")
JAZZMINE_LLM_API_KEY = env_str("JAZZMINE_LLM_API_KEY", "")
JAZZMINE_LLM_MODEL = env_str("JAZZMINE_LLM_MODEL", "")

# Outbound requests (webhooks, LLM endpoints) reach public addresses only, except these hosts:
# `host` (any port) or `host:port`, e.g. `127.0.0.1:8765` for a local model server.
JAZZMINE_OUTBOUND_ALLOWED_HOSTS = env_list("JAZZMINE_OUTBOUND_ALLOWED_HOSTS", [])
# Webhooks have their own list: any agent's token sets one, so an exception made for the
# operator's LLM endpoint (a local model server) must not open that service to them too.
JAZZMINE_WEBHOOK_ALLOWED_HOSTS = env_list("JAZZMINE_WEBHOOK_ALLOWED_HOSTS", [])

# Login throttling (django-axes): a username is locked out from one IP address after this many
# failed logins in a row, for the cool-off period, even with the right password; so is a
# username tried from many addresses, and an address trying many usernames, after the wider
# limits below, except where that username logged in before (`teams.throttling`).
AUTHENTICATION_BACKENDS = [
    "jazzmine_web.teams.throttling.ThrottledLoginBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = env_bool("JAZZMINE_LOGIN_THROTTLING", True)
AXES_FAILURE_LIMIT = env_int("JAZZMINE_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_float("JAZZMINE_LOGIN_COOLOFF_MINUTES", 15.0))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_HANDLER = "jazzmine_web.teams.throttling.LoginLockHandler"
JAZZMINE_LOGIN_USERNAME_FAILURE_LIMIT = env_int("JAZZMINE_LOGIN_USERNAME_FAILURE_LIMIT", 20)
JAZZMINE_LOGIN_ADDRESS_FAILURE_LIMIT = env_int("JAZZMINE_LOGIN_ADDRESS_FAILURE_LIMIT", 20)
# The address is REMOTE_ADDR, with an IPv6 client's whole /64 counted as one address.
AXES_CLIENT_IP_CALLABLE = "jazzmine_web.teams.throttling.client_address"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "jazzmine_web.teams.throttling.lockout_response"
AXES_VERBOSE = False
# Its rows are every team's: `teams/admin_logins.py` registers them for superusers alone.
AXES_ENABLE_ADMIN = False

# Script tools and bash
# Where a network-enabled sandbox reaches this server's /v1/key (e.g. http://172.17.0.1:8000
# when daphne listens on the Docker bridge); empty: secrets reach sandboxes as env only.
JAZZMINE_KEYCHAIN_URL = env_str("JAZZMINE_KEYCHAIN_URL", "")
# `host:port` pairs (or URLs) a network-enabled sandbox may reach although they are not on the
# public internet, besides the keychain's; every other private, loopback or link-local address
# and this host itself are dropped by the sandboxes' network filter (`jazzmine.sandbox.egress`).
JAZZMINE_SANDBOX_EGRESS_ALLOW = env_list("JAZZMINE_SANDBOX_EGRESS_ALLOW", [])
JAZZMINE_MAX_BASH_CHARS = env_int("JAZZMINE_MAX_BASH_CHARS", 100_000)
# Every run's claim reads all of a sandbox's tools and every prompt lists them: a member's
# loop creating tools would otherwise slow every run of the sandbox without end.
JAZZMINE_MAX_TOOLS_PER_SANDBOX = env_int("JAZZMINE_MAX_TOOLS_PER_SANDBOX", 200, minimum=1)

# Reviews
# Seconds between sweeps that expire overdue submissions and catch up on finished runs.
JAZZMINE_REVIEW_SWEEP_SECONDS = env_float("JAZZMINE_REVIEW_SWEEP_SECONDS", 5.0)
# Longest a single long-poll `wait` request may hold on.
JAZZMINE_REVIEW_MAX_WAIT_SECONDS = env_float("JAZZMINE_REVIEW_MAX_WAIT_SECONDS", 60.0)
# Longest an agent's event stream stays open.
JAZZMINE_REVIEW_MAX_STREAM_SECONDS = env_float("JAZZMINE_REVIEW_MAX_STREAM_SECONDS", 600.0)
# Waits and event streams one user may hold open at once in one web process.
JAZZMINE_REVIEW_MAX_LONG_REQUESTS = env_int("JAZZMINE_REVIEW_MAX_LONG_REQUESTS", 16)
# Websockets one user may hold open at once in one web process (pages: one or two each).
JAZZMINE_MAX_SOCKETS_PER_USER = env_int("JAZZMINE_MAX_SOCKETS_PER_USER", 40, minimum=1)
# Webhooks: first retry after this many seconds, doubling each time, up to max attempts.
JAZZMINE_WEBHOOK_BACKOFF_SECONDS = env_float("JAZZMINE_WEBHOOK_BACKOFF_SECONDS", 2.0)
JAZZMINE_WEBHOOK_MAX_ATTEMPTS = env_int("JAZZMINE_WEBHOOK_MAX_ATTEMPTS", 6)
# The time one delivery attempt may take.
JAZZMINE_WEBHOOK_TIMEOUT_SECONDS = env_float("JAZZMINE_WEBHOOK_TIMEOUT_SECONDS", 10.0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"refusals": {"()": "jazzmine_web.studio.logs.RefusalsInOneLine"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["refusals"]}},
    "root": {"handlers": ["console"], "level": env_str("JAZZMINE_LOG_LEVEL", "INFO")},
    # axes logs every successful login's reset at INFO; lockouts still come out as warnings.
    "loggers": {
        "axes": {"level": "WARNING"},
        # One line per task received and per task done: every few seconds for the sweeps.
        "celery.app.trace": {"level": "WARNING"},
        "celery.worker.strategy": {"level": "WARNING"},
        "celery.beat": {"level": "WARNING"},
    },
}

# Periodic work (celery beat): the reapers, the review sweep (expiry, webhook retries due),
# and the revoke of API tokens a write around the models ended (`api_tokens_settle`).


def _every(task: str, seconds: float) -> dict[str, Any]:
    # A sweep nobody took within its own period is dropped: the next one does the same work.
    # Without it, beat's messages pile up while no worker runs (hundreds after a night) and
    # all run at once when one comes back.
    return {"task": task, "schedule": seconds, "options": {"expires": seconds}}


# Beat runs the reapers itself (`jazzmine_web.beat`): they judge dead workers, so they must
# not wait for a live one.
CELERY_BEAT_SCHEDULER = "jazzmine_web.beat:Scheduler"
JAZZMINE_REAP_SECONDS = env_float("JAZZMINE_REAP_SECONDS", 10.0, above=0.0)
CELERY_BEAT_SCHEDULE = {
    "runs-reap": _every("runs.reap", JAZZMINE_REAP_SECONDS),
    "builds-reap": _every("catalog.builds_reap", 30.0),
    "trials-reap": _every("scripttools.trials_reap", 30.0),
    "reviews-sweep": _every("reviews.sweep", JAZZMINE_REVIEW_SWEEP_SECONDS),
    "tokens-settle": _every(
        "teams.tokens_settle", env_float("JAZZMINE_TOKENS_SETTLE_SECONDS", 60.0)
    ),
}
