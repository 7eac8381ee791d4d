"""Read the run socket's HTML fragments as a browser's htmx would: which seqs, which status."""

from __future__ import annotations

import re

from channels.testing import WebsocketCommunicator

from jazzmine_web.runs.models import RunStatus

SEQ = re.compile(r'<li class="[^"]*" data-seq="(\d+)"')
STATUS = re.compile(r'data-run-status data-status="(\w+)"')


def seqs(html: str) -> list[int]:
    """Return the sequence numbers of the lines a fragment adds, in order."""
    return [int(n) for n in SEQ.findall(html)]


def status(html: str) -> str | None:
    """Return the status a fragment shows, if it shows one."""
    found = STATUS.search(html)
    return found[1] if found else None


async def receive_until_finished(ws: WebsocketCommunicator) -> tuple[list[str], str]:
    """Return the fragments up to the one that shows a finished status, and that status."""
    fragments: list[str] = []
    while True:
        html = await ws.receive_from(timeout=60)
        fragments.append(html)
        if status(html) in RunStatus.finished():
            return fragments, status(html)
