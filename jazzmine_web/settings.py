"""Settings for Jazzmine Studio: embedded defaults, everything overridable by environment."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from .env import env_bool, env_float, env_int, env_list, env_str, persistent_secret

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("JAZZMINE_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("JAZZMINE_DEBUG", False)
SECRET_KEY = persistent_secret("JAZZMINE_SECRET_KEY", VAR_DIR / "secret_key")
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
    "jazzmine_web.catalog",
    "jazzmine_web.runs",
    "jazzmine_web.playground",
    "jazzmine_web.scripttools",
    "jazzmine_web.reviews",
    "axes",
]

MIDDLEWARE = [
    # First: refuse an oversized body before anything reads it.
    "jazzmine_web.studio.limits.RequestSizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a lockout during login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

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

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": env_str("JAZZMINE_DATABASE_PATH", str(VAR_DIR / "jazzmine.sqlite3")),
        # Runs stream events while pages read them: WAL lets readers and one writer coexist.
        "OPTIONS": {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
        # A file, not shared-cache memory: worker threads (image builds, runs) write while
        # consumers read, and only a real file gives them WAL instead of "table is locked".
        # One per process, so that two test runs on one machine never share (and break) it.
        "TEST": {"NAME": str(VAR_DIR / f"test_jazzmine_{os.getpid()}.sqlite3")},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
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
JAZZMINE_SECRETS_KEY = persistent_secret("JAZZMINE_SECRETS_KEY", VAR_DIR / "secrets_key")
JAZZMINE_IMPORT_MAX_FILE_BYTES = env_int("JAZZMINE_IMPORT_MAX_FILE_BYTES", 1024 * 1024)

# Catalog walls: what only the operator decides (issue 10, classes 1, 7 and 8).
# Package indexes for `pip download`; empty: pip's own configuration on the host.
JAZZMINE_PIP_INDEX_URL = env_str("JAZZMINE_PIP_INDEX_URL", "")
JAZZMINE_PIP_EXTRA_INDEX_URLS = env_list("JAZZMINE_PIP_EXTRA_INDEX_URLS", [])
# The base images sandboxes may name; the builder refuses any other and pulls only if allowed.
JAZZMINE_BASE_IMAGES = env_list("JAZZMINE_BASE_IMAGES", [JAZZMINE_BASE_IMAGE])
JAZZMINE_BASE_IMAGE_PULL = env_bool("JAZZMINE_BASE_IMAGE_PULL", False)
# Largest sandbox numbers a form accepts; runs clamp stored values to them too.
JAZZMINE_MAX_SANDBOX_MEMORY_MB = env_int("JAZZMINE_MAX_SANDBOX_MEMORY_MB", 4096)
JAZZMINE_MAX_SANDBOX_CPUS = env_float("JAZZMINE_MAX_SANDBOX_CPUS", 4.0)
JAZZMINE_MAX_SANDBOX_PIDS = env_int("JAZZMINE_MAX_SANDBOX_PIDS", 1024)
JAZZMINE_MAX_SANDBOX_TIMEOUT_SECONDS = env_float("JAZZMINE_MAX_SANDBOX_TIMEOUT_SECONDS", 600.0)
JAZZMINE_MAX_SANDBOX_OUTPUT_BYTES = env_int("JAZZMINE_MAX_SANDBOX_OUTPUT_BYTES", 50 * 1024 * 1024)
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

# Login throttling (django-axes): a username is locked out from one IP address after this many
# failed logins in a row, for the cool-off period, even with the right password.
AUTHENTICATION_BACKENDS = [
    "jazzmine_web.teams.throttling.ThrottledLoginBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = env_bool("JAZZMINE_LOGIN_THROTTLING", True)
AXES_FAILURE_LIMIT = env_int("JAZZMINE_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_float("JAZZMINE_LOGIN_COOLOFF_MINUTES", 15.0))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "jazzmine_web.teams.throttling.lockout_response"
AXES_VERBOSE = False

# Script tools and bash
# Where a network-enabled sandbox reaches this server's /v1/key (e.g. http://172.17.0.1:8000
# when daphne listens on the Docker bridge); empty: secrets reach sandboxes as env only.
JAZZMINE_KEYCHAIN_URL = env_str("JAZZMINE_KEYCHAIN_URL", "")
JAZZMINE_MAX_BASH_CHARS = env_int("JAZZMINE_MAX_BASH_CHARS", 100_000)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("JAZZMINE_LOG_LEVEL", "INFO")},
    # axes logs every successful login's reset at INFO; lockouts still come out as warnings.
    "loggers": {"axes": {"level": "WARNING"}},
}
