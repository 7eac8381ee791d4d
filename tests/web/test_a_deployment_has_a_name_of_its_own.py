"""A deployment's name keeps its images, containers and Redis keys apart from another's.

Its processes share one secret key and no two deployments do, so the default name comes from
that key; an operator may set `JAZZMINE_DEPLOYMENT` instead, spelt as one Docker path
component, since it goes into image repositories.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from jazzmine_web.env import deployment_name

ROOT = Path(__file__).resolve().parents[2]


def test_the_default_name_follows_the_secret_key(monkeypatch):
    monkeypatch.delenv("JAZZMINE_DEPLOYMENT", raising=False)
    prod = deployment_name("JAZZMINE_DEPLOYMENT", "prod-key-" + "x" * 40)
    assert prod == deployment_name("JAZZMINE_DEPLOYMENT", "prod-key-" + "x" * 40)
    assert prod != deployment_name("JAZZMINE_DEPLOYMENT", "staging-key-" + "x" * 40)
    assert len(prod) == 10 and prod.isalnum() and prod == prod.lower()


@pytest.mark.parametrize("name", ["shop", "shop-prod", "shop.prod_2", "a" * 32, "0"])
def test_an_operator_names_the_deployment(monkeypatch, name):
    monkeypatch.setenv("JAZZMINE_DEPLOYMENT", name)
    assert deployment_name("JAZZMINE_DEPLOYMENT", "any key") == name


@pytest.mark.parametrize(
    "name",
    [
        "Shop",  # Docker refuses capitals in a repository
        "shop/prod",  # another path component: jazzmine/sandbox/shop/prod-1
        "shop:prod",  # a tag
        "shop prod",
        "-shop",
        "shop-",
        "shop--prod",
        "shop..prod",
        "a" * 33,
        "shöp",
        "shop\n",
        "²",
    ],
)
def test_a_name_docker_cannot_file_is_refused(monkeypatch, name):
    monkeypatch.setenv("JAZZMINE_DEPLOYMENT", name)
    with pytest.raises(ImproperlyConfigured, match="JAZZMINE_DEPLOYMENT"):
        deployment_name("JAZZMINE_DEPLOYMENT", "any key")


def settings_of(**env: str) -> list[str]:
    """Start the settings as a process of a deployment would; return its name and Redis prefix."""
    ambient = {
        k: v
        for k, v in os.environ.items()
        if k not in ("JAZZMINE_DEPLOYMENT", "JAZZMINE_REDIS_PREFIX", "JAZZMINE_SECRET_KEY")
    }
    code = (
        "from django.conf import settings;"
        "print(settings.JAZZMINE_DEPLOYMENT, settings.JAZZMINE_REDIS_PREFIX)"
    )
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "shell", "-c", code],
        cwd=ROOT,
        env={**ambient, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1].split()  # after the shell's own greeting


def test_two_deployments_on_one_redis_keep_their_own_keys():
    prod = settings_of(JAZZMINE_SECRET_KEY="p" * 50)
    staging = settings_of(JAZZMINE_SECRET_KEY="s" * 50)
    assert prod == settings_of(JAZZMINE_SECRET_KEY="p" * 50)  # every process of one agrees
    assert prod[1] == f"jazzmine-{prod[0]}" and staging[1] == f"jazzmine-{staging[0]}"
    assert prod != staging
    named = settings_of(JAZZMINE_SECRET_KEY="p" * 50, JAZZMINE_DEPLOYMENT="shop-prod")
    assert named == ["shop-prod", "jazzmine-shop-prod"]
