from __future__ import annotations

import gc
import json
import time

import pytest
from channels.testing import WebsocketCommunicator

from jazzmine_web.asgi import application
from tests.web.helpers import playground_socket

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_forbidden_call_is_reported_on_its_line_as_it_is_typed(ecommerce, member):
    ws = await playground_socket(member)
    try:
        body = "orders = get_orders()\ndata = open('/etc/passwd').read()\nemit_result(data)\n"
        await ws.send_json_to(
            {"type": "validate", "version": 7, "sandbox": ecommerce.pk, "body": body}
        )
        reply = await ws.receive_json_from(timeout=5)
        assert reply["type"] == "validation" and reply["version"] == 7
        assert [v["line"] for v in reply["violations"]] == [2]
        assert "call to 'open' is forbidden" in reply["violations"][0]["message"]
        assert "<span" in reply["html"]  # highlighted for the editor's overlay

        fixed = "orders = get_orders()\nemit_result(orders.data)\n"
        await ws.send_json_to(
            {"type": "validate", "version": 8, "sandbox": ecommerce.pk, "body": fixed}
        )
        reply = await ws.receive_json_from(timeout=5)
        assert reply["version"] == 8 and reply["violations"] == []
    finally:
        await ws.disconnect()


async def test_validation_answers_well_under_a_tenth_of_a_second(ecommerce, member):
    ws = await playground_socket(member)
    body = "items = get_orders().data['orders']\n" * 40 + "emit_result({'n': len(items)})\n"
    try:
        timings = []
        for version in range(1, 21):
            started = time.perf_counter()
            await ws.send_json_to(
                {"type": "validate", "version": version, "sandbox": ecommerce.pk, "body": body}
            )
            await ws.receive_json_from(timeout=5)
            timings.append(time.perf_counter() - started)
        timings.sort()
        assert timings[len(timings) // 2] < 0.1
    finally:
        await ws.disconnect()


async def test_an_unknown_sandbox_or_a_bad_message_gets_a_clear_error(ecommerce, member, outsider):
    ws = await playground_socket(outsider)
    try:
        await ws.send_json_to(
            {"type": "validate", "version": 1, "sandbox": ecommerce.pk, "body": "x"}
        )
        assert await ws.receive_json_from(timeout=5) == {
            "type": "error",
            "message": "no such sandbox",
        }
        await ws.send_json_to({"type": "explode"})
        assert "unknown message" in (await ws.receive_json_from(timeout=5))["message"]
        await ws.send_json_to(["not", "an", "object"])
        assert "JSON objects" in (await ws.receive_json_from(timeout=5))["message"]
    finally:
        await ws.disconnect()


async def test_anonymous_visitors_are_refused():
    ws = WebsocketCommunicator(
        application, "/ws/playground/", headers=[(b"origin", b"http://localhost")]
    )
    connected, code = await ws.connect()
    assert not connected and code == 4403


async def test_a_huge_paste_is_checked_off_the_event_loop(ecommerce, member):
    """While a 200 KB paste is parsed and highlighted, another socket still answers at once."""
    # The test process also holds the whole suite's objects: a full collection of that heap
    # pauses every thread for a few hundred ms (seen once in CI at the suite's end), which is
    # not what is measured here. Frozen objects are left out of collections.
    gc.collect()
    gc.freeze()
    paster, other = await playground_socket(member), await playground_socket(member)
    line = "orders_{i} = get_orders(status='delivered').data['orders'][:{i}]  # pasted\n"
    body = "".join(line.format(i=i) for i in range(2600)) + "emit_result(1)\n"
    assert len(body) > 200_000 - 10_000
    try:
        started = time.perf_counter()
        await paster.send_json_to(
            {"type": "validate", "version": 1, "sandbox": ecommerce.pk, "body": body[:199_000]}
        )
        round_trips = []
        while True:
            sent = time.perf_counter()
            await other.send_json_to({"type": "ping?"})
            reply = await other.receive_json_from(timeout=5)
            round_trips.append(time.perf_counter() - sent)
            assert reply["type"] == "error"
            if not await paster.receive_nothing(timeout=0.01):
                break
        checked = await paster.receive_json_from(timeout=5)
        assert checked["type"] == "validation" and checked["version"] == 1
        took = time.perf_counter() - started
    finally:
        await paster.disconnect()
        await other.disconnect()
        gc.unfreeze()
    assert len(round_trips) >= 3, f"the check took {took:.3f} s: too quick to measure"
    assert max(round_trips) < 0.05, f"round trips {sorted(round_trips)[-3:]} during the check"


async def test_only_the_newest_of_several_quick_texts_is_answered_last(ecommerce, member):
    ws = await playground_socket(member)
    big = "x = get_orders()\n" * 8000 + "emit_result(x.data)\n"
    try:
        for version in range(1, 6):
            await ws.send_json_to(
                {"type": "validate", "version": version, "sandbox": ecommerce.pk, "body": big}
            )
        await ws.send_json_to(
            {"type": "validate", "version": 6, "sandbox": ecommerce.pk, "body": "emit_result(1)\n"}
        )
        versions = []
        while not versions or versions[-1] != 6:
            versions.append((await ws.receive_json_from(timeout=10))["version"])
    finally:
        await ws.disconnect()
    assert versions[-1] == 6 and len(versions) < 6, versions


async def test_the_answer_to_any_paste_fits_in_one_socket_frame(ecommerce, member):
    # daphne sends at most 1 MiB a frame (autobahn's payload limit): a bigger answer is never
    # sent, and the editor waited for it with Run disabled. Dense code highlights to ~15
    # bytes a character; a violation on every line lists one message a line.
    dense = "".join(f"a{i} = [1, 2, 3, 4, 5, 6, 7, 8, 9, 0]\n" for i in range(5000))
    texts = {"dense code": dense[:199_000], "a violation a line": "open('x')\n" * 19_900}
    page = await playground_socket(member)
    try:
        for version, (case, body) in enumerate(texts.items(), start=1):
            await page.send_json_to(
                {"type": "validate", "version": version, "sandbox": ecommerce.pk, "body": body}
            )
            reply = await page.receive_json_from(timeout=60)
            assert reply["type"] == "validation" and reply["version"] == version, case
            assert len(json.dumps(reply)) < 1024 * 1024, case
    finally:
        await page.disconnect()
    assert reply["violations"][-1]["message"].startswith("... and "), reply["violations"][-1]
