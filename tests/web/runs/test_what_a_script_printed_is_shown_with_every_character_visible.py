"""A run's output is shown with every character a page draws as nothing written as its escape.

Output is what happened: it cannot be refused as a script holding such characters is. Shown
as it was, a right-to-left override drew a log line in another order than it was printed, a
terminal escape or a zero-width space vanished. The pane (its first load, a reload, the socket
that follows it) writes each as `\\uXXXX`; the API's events keep the text as the run sent it.
"""

from __future__ import annotations

import json

import pytest

from jazzmine.visible import visible
from jazzmine_web.runs.consumers import events_html_parts
from jazzmine_web.runs.models import Run, RunEvent

from ..helpers import run_printed

pytestmark = pytest.mark.django_db

HIDDEN = ["\u202e", "\u2067", "\u200b", "\x1b", "\x07", "\x9b", "\u2028", "\u200f"]
LOG = "refund of $\u202e00.005\u200f for order 1\x1b[2K\x07"


@pytest.fixture
def printed(ecommerce, member) -> Run:
    return run_printed(ecommerce, member, [
        ("log", {"message": LOG}),
        ("intermediate", {"label": "step\u2067 one", "data": {"note": "a\u200bb\u2028c"}}),
        ("error", {"message": "failed\x9b at\u202e 1", "traceback": ""}),
        ("result", {"total": "1\u202e00"}),
        ("exit", {"outcome": "error", "message": "failed\x9b at\u202e 1"}),
    ])  # fmt: skip


def test_the_runs_page_shows_each_hidden_character_as_its_escape(client, member, printed):
    client.force_login(member)
    for _ in range(2):  # and again, as a reload does
        html = client.get(f"/runs/{printed.pk}/").content.decode()
        assert not [c for c in HIDDEN if c in html]
        assert "refund of $\\u202e00.005\\u200f for order 1\\u001b[2K\\u0007" in html
        assert "step\\u2067 one" in html and "a\\u200bb\\u2028c" in html
        assert "failed\\u009b at\\u202e 1" in html and "1\\u202e00" in html


def test_the_socket_that_follows_a_run_sends_the_same(printed):
    events = list(RunEvent.objects.filter(run=printed).order_by("seq").values(
        "seq", "type", "data", "ts"))  # fmt: skip
    html = "".join(events_html_parts(printed, events, replace=True))
    assert not [c for c in HIDDEN if c in html]
    assert "\\u202e00.005" in html


def test_the_api_keeps_what_the_run_sent(printed):
    assert RunEvent.objects.get(run=printed, seq=1).data == {"message": LOG}


def test_what_stays_as_it_is():
    kept = "tab\there\r\nline é 日本 \U0001f468\u200d\U0001f469 \u200c \\u202e"
    assert visible(kept) == kept  # joiners make emoji and scripts; a written escape stays text
    assert visible("\u202a\u202b\u202c\u202d\u2066\u2068\u2069\u2060\x00\x7f\x0b\x0c") == (
        "\\u202a\\u202b\\u202c\\u202d\\u2066\\u2068\\u2069\\u2060\\u0000\\u007f\\u000b\\u000c"
    )


def test_tag_characters_and_invisible_operators_are_shown_as_their_json_escapes():
    # Tag characters spelt a whole sentence no page drew (an agent's task, a tool's output).
    hidden = "ok" + "".join(chr(0xE0000 + ord(c)) for c in "Hi") + "\u2062"
    shown = visible(hidden)
    assert shown == "ok\\udb40\\udc48\\udb40\\udc69\\u2062"
    assert json.loads(f'"{shown}"') == hidden  # exactly what the JSON escape means
