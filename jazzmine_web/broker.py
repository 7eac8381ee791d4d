"""The Celery broker's transport: kombu's Redis transport, with one client per channel."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from kombu.transport import redis
from redis.exceptions import ConnectionError as BrokerGone

TRANSPORT = "jazzmine_web.broker:Transport"


class Channel(redis.Channel):
    """kombu's Redis channel, keeping one client over its connection pool.

    kombu builds a `redis.Redis` for every publish and every acknowledgement, and building
    one copies some 170 response callbacks: a fifth of a run's publish. A client over a pool
    is thread-safe and holds no connection of its own, so one serves every call of the
    channel, as long as its pool is the channel's current one (kombu drops the pool when
    the channel closes).
    """

    _kept: Any = None

    def _create_client(self, asynchronous: bool = False) -> Any:
        if self.connection.client is None:
            # The worker's connection was collected after the broker went away (Celery 5.7
            # collects, then closes it), and closing its channel now puts the unacknowledged
            # messages back: a new pool needs the connection's URL, which is gone, and the
            # AttributeError that kombu raises is no connection error, so it stops the worker
            # ("Unrecoverable error") when Redis restarts during a run. A connection error is
            # what it is: Celery ignores it and reconnects. The message it could not put back
            # is the run this worker is still executing (a redelivery would be refused by the
            # claim on its row anyway).
            raise BrokerGone("the broker connection is closed")
        if asynchronous:  # the consumer's, which kombu keeps already
            return super()._create_client(asynchronous=True)
        kept = self._kept
        if kept is None or kept.connection_pool is not self.pool:
            kept = self._kept = super()._create_client()
        return kept


class Transport(redis.Transport):
    """kombu's Redis transport with `Channel` above."""

    Channel = Channel


def broker_transport(url: str) -> str | None:
    """Return the transport for a broker URL: this one for `redis://`, else kombu's own.

    An explicit transport replaces the URL's scheme in kombu, which turns TLS on by that
    scheme: a `rediss://` broker keeps kombu's transport, and its TLS.
    """
    return TRANSPORT if urlsplit(url).scheme == "redis" else None
