"""Typed readers for settings that come from environment variables."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str) -> str:
    """Return a string setting."""
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    """Return a boolean setting; anything but a clear yes or no is an error."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    """Return an integer setting (at least `minimum` when given)."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {raw!r}")
    return value


def env_float(name: str, default: float, *, above: float | None = None) -> float:
    """Return a number setting (finite, and greater than `above` when given)."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, not {raw!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ImproperlyConfigured(f"{name} must be a finite number, not {raw!r}")
    if above is not None and value <= above:
        raise ImproperlyConfigured(f"{name} must be more than {above:g}, not {raw!r}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    """Return a comma-separated list setting."""
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def persistent_secret(name: str, path: Path) -> str:
    """Return a secret from the environment, else one generated once and kept in a file."""
    value = os.environ.get(name)
    if value:
        return value
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_urlsafe(48)
    path.write_text(value)
    path.chmod(0o600)
    return value


def env_database(name: str, *, sqlite_path: Path, test_suffix: str) -> dict[str, Any]:
    """Return the default database from a URL (SQLite file when unset; PostgreSQL by psycopg 3).

    SQLite gets WAL and immediate transactions (readers and one writer coexist); PostgreSQL
    gets psycopg's connection pool, so a burst of events reuses connections instead of opening
    one a write.
    """
    url = os.environ.get(name, "").strip()
    if not url:
        url = f"sqlite:///{sqlite_path}"
    try:
        config: dict[str, Any] = dict(dj_database_url.parse(url))
    except Exception as exc:
        raise ImproperlyConfigured(f"{name} is not a database URL: {exc}") from None
    engine = config.get("ENGINE", "")
    if engine == "django.db.backends.sqlite3":
        config["OPTIONS"] = {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
        # Keep each thread's connection: opening one (with the pragmas) costs ~15 ms, and the
        # worker's database thread and the consumers' would otherwise reopen it per event.
        config["CONN_MAX_AGE"] = None
        # A file, not shared-cache memory: workers write while consumers read, and only a
        # real file gives them WAL. One per process, so two test runs never share it.
        test_name = str(Path(config["NAME"]).with_name(f"test_jazzmine_{test_suffix}.sqlite3"))
        config["TEST"] = {"NAME": test_name}
    elif engine == "django.db.backends.postgresql":
        config["CONN_MAX_AGE"] = 0  # the pool keeps connections; Django must not as well
        # A restart of the server (or a failover) leaves every idle connection of the pool
        # dead, and the pool learns it only from the query that fails on one: a 500 per
        # connection in a web process, a run failed for an event it "could not store" in a
        # worker. With health checks Django has the pool check each connection as it is taken
        # (`ConnectionPool.check_connection`: one empty query, ~0.1 ms on loopback) and
        # replace a dead one.
        config["CONN_HEALTH_CHECKS"] = True
        config["OPTIONS"] = {
            "pool": {
                "min_size": 1,
                "max_size": env_int("JAZZMINE_DATABASE_POOL_SIZE", 10),
                "timeout": env_float("JAZZMINE_DATABASE_POOL_TIMEOUT", 20.0),
            }
        }
        config["TEST"] = {"NAME": f"test_jazzmine_{test_suffix}"}
    else:
        raise ImproperlyConfigured(f"{name} must name SQLite or PostgreSQL, not {engine!r}")
    return config


# A deployment's name goes into image repositories and Redis keys: one Docker path component.
_DEPLOYMENT = re.compile(r"^[a-z0-9]+(?:[._-][a-z0-9]+)*$")


def deployment_name(name: str, secret_key: str) -> str:
    """Return the name that keeps this deployment's images, containers and keys its own.

    Deployments may share one Docker engine or one Redis, and their sandbox ids, worker
    names (`worker1@<host>`) and queues are alike: without a name of their own, one's image
    prune removes the other's current image and one's worker start removes the other's
    running containers. Every process of a deployment shares its secret key (required when
    the data is shared), and no two deployments do, so the default is derived from it.
    """
    value = os.environ.get(name, "")
    if not value:
        digest = hashlib.sha256(b"jazzmine deployment\0" + secret_key.encode()).hexdigest()
        return digest[:10]
    if len(value) > 32 or not _DEPLOYMENT.fullmatch(value):
        raise ImproperlyConfigured(
            f"{name}={value!r} must be lowercase letters and digits joined by single "
            "'.', '_' or '-' (at most 32 characters)"
        )
    return value


def is_shared_database(config: dict[str, Any]) -> bool:
    """Tell whether processes on other machines may share this database (anything but SQLite)."""
    return config.get("ENGINE") != "django.db.backends.sqlite3"


def shared_secret(name: str, path: Path, *, shared: bool) -> str:
    """Return a secret every process must agree on; refuse a per-machine one when data is shared.

    On one machine the generated file is the agreement. With a shared database, a process on
    another machine would generate a different key: sessions would not verify and stored
    secrets would not decrypt, so the operator must set it.
    """
    if shared and not os.environ.get(name):
        raise ImproperlyConfigured(
            f"{name} must be set (the same value in every process) when the database is shared"
        )
    return persistent_secret(name, path)
