"""ASGI entry point: HTTP through Django, websockets through Channels."""

from __future__ import annotations

import os

from django.conf import settings
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "jazzmine_web.settings")
# Django must be set up before consumers (and their models) are imported.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import WebsocketDenier  # noqa: E402
from django.urls import re_path  # noqa: E402

from .origins import OriginValidator  # noqa: E402
from .routing import websocket_urlpatterns  # noqa: E402
from .studio.heap import startup_heap_freeze  # noqa: E402
from .studio.limits import RequestSizeLimitASGI  # noqa: E402
from .studio.live import ServerLoop  # noqa: E402
from .studio.sockets import SocketsPerUser  # noqa: E402
from .studio.static import StaticFilesHandler  # noqa: E402
from .studio.untrusted import WebsocketNulRefusal  # noqa: E402

http_app = (
    StaticFilesHandler(django_asgi_app) if settings.JAZZMINE_SERVE_STATIC else django_asgi_app
)

# Last, any other path: refused at the handshake, where Channels' router raises ("No route
# found"), which the server answers with a 500 and a traceback.
sockets = URLRouter([*websocket_urlpatterns, re_path(r"", WebsocketDenier.as_asgi())])

application = ServerLoop(
    ProtocolTypeRouter(
        {
            # Outermost: Django reads a whole body before its own middleware runs.
            "http": RequestSizeLimitASGI(http_app),
            # Origin by scheme, host and port (Channels' own validator ignores the port); no
            # NUL in a header, which the session's lookup could not take (HTTP's is middleware);
            # then, the user known, no more than so many sockets per person.
            "websocket": WebsocketNulRefusal(
                OriginValidator(AuthMiddlewareStack(SocketsPerUser(sockets)))
            ),
        }
    )
)

startup_heap_freeze()
