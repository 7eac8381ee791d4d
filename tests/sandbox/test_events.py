"""The event protocol: parsing, serializing, and the closed set of outcomes."""

from __future__ import annotations

import pytest

from jazzmine.sandbox import Event, Outcome, ProtocolError, RunRequest, parse_event


def test_an_event_round_trips_through_its_line():
    event = Event(seq=3, type="intermediate", data={"label": "x", "data": [1]}, ts=1.5)
    assert parse_event(event.to_json()) == event


@pytest.mark.parametrize(
    "line",
    ["not json", "[]", '{"seq": "1", "type": "log", "ts": 1}', '{"seq": 1, "type": "x", "ts": 1}',
     '{"seq": 1, "type": "log"}'],
)  # fmt: skip
def test_it_refuses_malformed_lines(line):
    with pytest.raises(ProtocolError):
        parse_event(line)


def test_the_outcome_of_a_final_event():
    event = Event(seq=1, type="exit", data={"outcome": "memory_killed"})
    assert event.is_final and event.outcome is Outcome.MEMORY_KILLED
    assert {o.value for o in Outcome} == {
        "result", "script_error", "timeout", "memory_killed", "output_limit",
        "container_crash", "engine_unavailable", "build_failed", "protocol_error", "cancelled",
        "worker_lost",
    }  # fmt: skip


def test_a_request_carries_only_declared_secrets():
    request = RunRequest.for_sandbox(
        "emit_result(1)", declared_secrets=["API_KEY", "ABSENT"],
        secret_store={"API_KEY": "a", "DB_PASSWORD": "p"},
    )  # fmt: skip
    assert dict(request.secrets) == {"API_KEY": "a"}
