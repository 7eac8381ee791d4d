"""Shared fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Hash test passwords cheaply: PBKDF2's million rounds cost 1.5 s a user on this machine."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user(username="ada", password="correct horse battery")


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the browser tests last.

    Playwright's sync API keeps an event loop running on the main thread for as long as its
    browser lives (a session fixture), and pytest-asyncio cannot start its own loop beside it.
    """
    items.sort(key=lambda item: item.get_closest_marker("e2e") is not None)
