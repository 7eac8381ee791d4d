"""Shared fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user(username="ada", password="correct horse battery")


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client
