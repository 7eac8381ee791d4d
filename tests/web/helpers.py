"""Helpers the web suites share: the demo module, uploaded files, a browser's websocket auth."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from jazzmine_web.catalog.importer import SourceFile
from jazzmine_web.teams.services import membership_set

DEMO = Path(settings.BASE_DIR) / "demo" / "ecommerce.py"


def source_file(name: str, text: str | bytes) -> SourceFile:
    """Return an upload of one file, as the importer receives it."""
    data = text.encode() if isinstance(text, str) else text
    return SourceFile(name=name, size=len(data), data=data)


def teammate(team, role: str, username: str = "grace"):
    """Return a new user who holds `role` in the team."""
    user = get_user_model().objects.create_user(username=username, password="x" * 12)
    membership_set(team=team, user=user, role=role)
    return user


def ws_headers(user) -> list[tuple[bytes, bytes]]:
    """Return the headers of a logged-in browser's websocket handshake."""
    client = Client()
    client.force_login(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    return [(b"cookie", cookie.encode()), (b"origin", b"http://localhost")]
