"""A local stand-in for an OpenAI-compatible LLM server, for tests and for demos without one.

Run it on its own event loop in a thread (`serving_in_thread`, for synchronous callers), or as a
command (the server, its wire and its default policy are in `jazzmine.llm.fake`):

    python -m jazzmine.llm.fake_server --port 8765      # then base URL http://127.0.0.1:8765/v1
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import threading
from collections.abc import Iterator, Sequence

from .fake.policy import script_policy
from .fake.server import DEFAULT_MODEL, FakeLLMServer


@contextlib.contextmanager
def serving_in_thread(server: FakeLLMServer) -> Iterator[FakeLLMServer]:
    """Run the server on its own event loop in a daemon thread (for synchronous callers)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="fake-llm", daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(server.start(), loop).result(timeout=10)
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


async def _serve(server: FakeLLMServer) -> None:
    await server.start()
    print(f"Fake LLM at {server.base_url} (models: {', '.join(server.models)})", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.close()


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--delay", type=float, default=0.02, help="seconds between streamed tokens")
    parser.add_argument(
        "--model", action="append", help=f"model id to accept (default {DEFAULT_MODEL})"
    )
    parser.add_argument("--api-key", help="require this Bearer key on API requests")
    parser.add_argument("--fences", action="store_true", help="wrap scripts in Markdown fences")
    args = parser.parse_args(argv)
    server = FakeLLMServer(
        policy=functools.partial(script_policy, fences=args.fences),
        host=args.host,
        port=args.port,
        token_delay=args.delay,
        models=args.model or (DEFAULT_MODEL,),
        api_key=args.api_key,
    )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(server))


if __name__ == "__main__":
    main()
