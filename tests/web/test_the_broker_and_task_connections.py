"""What a task costs before it starts: the broker's Redis client and the task thread's database.

kombu builds a Redis client for every publish; this project's transport keeps one per channel
(a fresh one when the channel's pool is replaced). Celery's Django fixup closes a task
thread's database connections around every task; here a task keeps its connection the way a
request does (SQLite's for good, PostgreSQL's back to the pool).
"""

from __future__ import annotations

import importlib
import uuid

import pytest
import redis
from celery import signals
from celery.fixups.django import DjangoWorkerFixup
from django.conf import settings
from django.db import connection

from jazzmine_web.broker import TRANSPORT, Transport, broker_transport
from jazzmine_web.celery import app


def test_redis_urls_take_this_transport_and_tls_urls_keep_kombus():
    assert settings.CELERY_BROKER_TRANSPORT == TRANSPORT
    assert broker_transport("redis://127.0.0.1:6379/0") == TRANSPORT
    assert broker_transport("redis://:secret@redis.internal:6380/3") == TRANSPORT
    # An explicit transport would replace the scheme that turns TLS on in kombu.
    for url in ("rediss://redis.internal:6380/0", "REDISS://redis.internal/0", "sentinel://h:1"):
        assert broker_transport(url) is None
    with app.connection_for_write() as conn:
        assert isinstance(conn.transport, Transport)


def test_publishes_share_one_redis_client_and_every_message_arrives(monkeypatch):
    built: list[object] = []
    init = redis.Redis.__init__

    def counted(self, *args, **kwargs):
        built.append(self)
        init(self, *args, **kwargs)

    queue = f"test-broker-{uuid.uuid4().hex[:8]}"
    app.send_task("tests.nothing", args=[0], queue=queue)  # the producer's channel exists now
    monkeypatch.setattr(redis.Redis, "__init__", counted)
    for n in range(1, 6):
        app.send_task("tests.nothing", args=[n], queue=queue)
    assert len(built) <= 1
    monkeypatch.undo()
    with app.connection_for_write() as conn:
        simple = conn.SimpleQueue(queue)
        try:
            got = sorted(simple.get(timeout=5).decode()[0][0] for _ in range(6))
        finally:
            simple.queue.delete()
            simple.close()
    assert got == [0, 1, 2, 3, 4, 5]


def test_a_channel_whose_pool_was_replaced_gets_a_client_over_the_new_one():
    with app.connection_for_write() as conn:
        channel = conn.default_channel
        first = channel._create_client()
        assert channel._create_client() is first
        assert channel._create_client(asynchronous=True) is not first  # the consumer's own
        channel._disconnect_pools()  # what kombu does as the channel closes or reconnects
        again = channel._create_client()
        assert again is not first and again.connection_pool is channel.pool
        assert again.ping()


@pytest.mark.django_db(transaction=True)
def test_a_task_keeps_its_connection_as_a_request_does():
    importlib.import_module("jazzmine_web.workers.tasks")  # its receivers, as a worker has them
    fixup = DjangoWorkerFixup(app)
    fixup.install()
    from jazzmine_web.runs.tasks import runs_reap as task

    try:
        connection.ensure_connection()
        raw = connection.connection
        for _task in range(3):
            signals.task_prerun.send(sender=task, task_id="t", task=task, args=(), kwargs={})
            signals.task_postrun.send(sender=task, task_id="t", task=task, args=(), kwargs={})
        if connection.settings_dict["CONN_MAX_AGE"] is None:  # SQLite: opening one costs ms
            assert connection.connection is raw
        else:  # PostgreSQL: back to the pool after each task
            assert connection.connection is None
    finally:
        for signal, handler in (
            (signals.task_prerun, fixup.on_task_prerun),
            (signals.task_postrun, fixup.on_task_postrun),
            (signals.worker_process_init, fixup.on_worker_process_init),
            (signals.beat_embedded_init, fixup.close_database),
        ):
            signal.disconnect(handler)
