"""An admin's Accept asks the Docker engine for the image's wheel files before it holds the row.

Held, the row is the whole database's write lock on SQLite (immediate transactions): an Accept
that asked the engine there made every run's events and every person's edit wait for the
engine, up to its 2 s timeout when it does not answer. Here the engine is a socket that takes
the request and never answers, and a person edits another sandbox while the admin's Accept
waits for it.
"""

from __future__ import annotations

import contextlib
import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest
from django.db import connection

from jazzmine_web.catalog.models import Sandbox
from jazzmine_web.catalog.services import (
    sandbox_create,
    sandbox_dependencies_accept,
    sandbox_update,
)

pytestmark = pytest.mark.django_db(transaction=True)


class SilentEngine:
    """A Unix socket that accepts every connection and never answers on any."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp()) / "docker.sock"  # a socket path has 107 bytes
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(self.path))
        self.server.listen(16)
        self.held: list[socket.socket] = []
        self.asked = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.server.accept()
                self.held.append(client)
                self.asked.set()

    def close(self) -> None:
        self.server.close()
        for client in self.held:
            client.close()


@pytest.fixture
def silent_engine(monkeypatch):
    engine = SilentEngine()
    monkeypatch.setenv("DOCKER_HOST", f"unix://{engine.path}")
    yield engine
    engine.close()


def test_an_edit_never_waits_for_the_engine_an_accept_is_asking(
    ecommerce, team, admin, member, silent_engine
) -> None:
    sandbox_update(sandbox=ecommerce, actor=member, dependencies=["jzlock==1.0"])
    other = sandbox_create(team=team, name="reports", actor=admin)
    for attempt in range(2):  # and pressed again
        accepted: list[Sandbox] = []
        silent_engine.asked.clear()

        def accept() -> None:
            try:
                accepted.append(
                    sandbox_dependencies_accept(
                        sandbox=Sandbox.objects.get(pk=ecommerce.pk), actor=admin
                    )
                )
            finally:
                connection.close()

        pressed = threading.Thread(target=accept)
        pressed.start()
        assert silent_engine.asked.wait(10), "the Accept never asked the engine"
        started = time.monotonic()
        sandbox_update(
            sandbox=Sandbox.objects.get(pk=other.pk), actor=member, description=f"edit {attempt}"
        )
        waited = time.monotonic() - started
        pressed.join(30)
        assert not pressed.is_alive()
        assert waited < 1.0, f"the edit waited {waited:.2f} s for the engine"
        # The engine did not answer: the build rows say (none), and the list alone is
        # accepted, no wheel bound, as the page says of an image nobody built.
        (row,) = accepted
        assert row.dependencies_accepted and row.accepted_wheels is None
    assert Sandbox.objects.get(pk=other.pk).description == "edit 1"
