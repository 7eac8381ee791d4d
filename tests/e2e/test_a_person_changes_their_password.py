"""A person changes their own password in Chromium, from their name in the top bar: a refused
try says why in place, the change keeps them signed in, and the next login takes the new one."""

from __future__ import annotations

import pytest

from .conftest import login

pytestmark = [pytest.mark.e2e]

MAKE_USER = """
from django.contrib.auth import get_user_model
get_user_model().objects.filter(username="grace").delete()
get_user_model().objects.create_user(username="grace", password="first-password-of-grace")
print("ok")
"""
NEW = "violet-harbour-57-kettles"


def fill(page, old: str, new: str) -> None:
    page.fill("input[name=old_password]", old)
    page.fill("input[name=new_password1]", new)
    page.fill("input[name=new_password2]", new)
    page.click("button:has-text('Change password')")


def test_a_person_changes_their_password_and_logs_in_with_it(page, studio_server) -> None:
    studio_server.manage("shell", "-c", MAKE_USER)
    login(page, studio_server, username="grace", password="first-password-of-grace")
    page.click(".topbar .user a:has-text('grace')")
    page.wait_for_url(f"{studio_server.url}/account/password/")

    fill(page, "first-password-of-grace", "password")
    assert "This password is too common" in page.locator("main").inner_text()

    fill(page, "first-password-of-grace", NEW)
    page.wait_for_selector(".messages li.success")
    assert "Password changed" in page.locator(".messages").inner_text()
    page.goto("/")  # still signed in
    assert page.locator(".topbar .user").inner_text().startswith("grace")

    page.click(".topbar .user button:has-text('Log out')")
    login(page, studio_server, username="grace", password=NEW)
