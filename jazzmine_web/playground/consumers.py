"""The playground's websocket: live checks of the editor, LLM generation, runs, auto mode.

Thin on purpose: every message is handed to a service; long work (an LLM stream, the auto
loop) is a task of this connection that a newer request or a disconnect cancels. Scripts
never run here: runs go to the run worker, and this socket streams the run the page started
as the run page's own HTML fragments (wrapped in JSON), plus its status for the buttons.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, TypedDict

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from channels.db import database_sync_to_async
from django.conf import settings
from django.db import connections
from django.template.loader import render_to_string

from jazzmine.orchestrator import generate_attempt, solve

from ..catalog.selectors import sandbox_for_user
from ..runs.consumers import RunFollowMixin, RunStatusPayload
from ..runs.lifecycle import run_cancel, sandbox_prewarm
from ..runs.models import Run
from ..runs.selectors import RunPane, run_for_user, run_pane, run_pane_new
from ..studio.checker import PROCESS_THRESHOLD_CHARS, CheckerUnavailable
from ..studio.live import AccessRecheck, connecting_user
from ..studio.session_bound import SessionBoundJsonWebsocketConsumer
from ..studio.untrusted import MessageRefused, id_number, socket_message, uuid_text
from . import services
from .checks import CheckedGenerator, Violation, check_off_loop, violations_by_line
from .models import Attempt, AttemptSource, PlaygroundSession
from .recorder import AttemptRecorder

MAX_BODY_CHARS = 200_000
MAX_AUTO_ATTEMPTS = 10
# Why a generation ended before the LLM's answer did, as its attempt says.
STOPPED_BY_CANCEL = "stopped with Cancel"
STOPPED_BY_LEAVING = "the page was closed or reloaded"
STOPPED_BY_NEWER = "a newer request of the page replaced it"
# The reason each stopped task is told when it hears its cancel (weakly: a task that never
# ran its handler takes its entry with it).
_STOP_REASONS: weakref.WeakKeyDictionary[asyncio.Task[None], str] = weakref.WeakKeyDictionary()
# A sandbox's pools are asked to fill at most once in this long by this process. Each ask is
# a broadcast to every worker (one at a time per process, as cancels are), and each worker
# answers it with a read on the thread that stores its runs' events; a pool keeps itself full
# once asked, so asking again at once adds nothing. A page asks as its socket opens.
PREWARM_EVERY_SECONDS = 10.0
_prewarm_asked: dict[int, float] = {}  # sandbox id: when this process last asked (monotonic)


class ValidationMessage(TypedDict):
    """Sent for each checked version of the editor's text."""

    type: str  # "validation"
    version: int
    violations: list[Violation]
    html: str | None  # None: too big to highlight, the editor keeps the plain text


class RunHtmlMessage(TypedDict):
    """Fragments of the followed run's pane (`templates/runs/_output.html`), out of band."""

    type: str  # "run_html"
    run_id: str
    html: str


class RunPaneMessage(TypedDict):
    """The whole pane of a run the page just started, to show in place of the last one."""

    type: str  # "run_pane"
    run_id: str
    html: str


@contextlib.asynccontextmanager
async def _own_database_thread() -> AsyncIterator[None]:
    """Run the database work inside on a thread of its own, then close that thread's connections.

    The thread goes with the context, and its connections must not stay behind: on PostgreSQL
    each is one of the pool's, which it would never get back (ten runs, and every request of
    the process waited for a connection).
    """
    async with ThreadSensitiveContext():
        try:
            yield
        finally:
            await sync_to_async(connections.close_all)()


class PlaygroundConsumer(RunFollowMixin, SessionBoundJsonWebsocketConsumer):
    """Serve one playground page."""

    # The messages a page sends, by their "type": each is handled by the method of that name.
    MESSAGES = ("validate", "prewarm", "generate", "auto", "run", "cancel", "follow", "watch")

    async def connect(self) -> None:
        user = await connecting_user(self)
        if user is None:
            return
        self.user = user
        self.task: asyncio.Task[None] | None = None
        self.tool_names: dict[int, list[str]] = {}
        # Per sandbox of `tool_names`: when its user was last found allowed to use it.
        self._tool_access: dict[int, AccessRecheck] = {}
        self._pending_check: tuple[int, str, str, list[str]] | None = None
        self._checker: asyncio.Task[None] | None = None
        self.watching: str | None = None  # the group of the session the page shows
        await self.accept()

    async def disconnect(self, code: int) -> None:
        self._stop_task(STOPPED_BY_LEAVING)
        checker = getattr(self, "_checker", None)
        if checker is not None:
            checker.cancel()
        if getattr(self, "watching", None):
            await self.channel_layer.group_discard(self.watching, self.channel_name)
        await self.unfollow_run()

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        # Read here, not by Channels' JSON consumer: a binary or empty frame, or text json
        # cannot read, raised there and ended the socket with a traceback (1011).
        try:
            content = socket_message(text_data)
        except MessageRefused as exc:
            await self.send_json({"type": "error", "message": str(exc)})
            return
        await self.receive_json(content)

    async def receive_json(self, content: dict[str, Any], **kwargs: Any) -> None:
        kind = content.get("type")
        # Only a name of the table: the type is any JSON (a list, an object, a method's name).
        if not isinstance(kind, str) or kind not in self.MESSAGES:
            await self.send_json({"type": "error", "message": _unknown_message(kind)})
            return
        try:
            await getattr(self, kind)(content)
        except (PlaygroundError, services.PlaygroundForbidden, CheckerUnavailable) as exc:
            await self.send_json({"type": "error", "message": str(exc)})

    # Messages

    async def validate(self, content: dict[str, Any]) -> None:
        sandbox_id = id_number(content.get("sandbox"))
        body = content.get("body", "")
        if not isinstance(body, str) or len(body) > MAX_BODY_CHARS:
            raise PlaygroundError(f"the script must be text of at most {MAX_BODY_CHARS} characters")
        version = id_number(content.get("version")) or 0
        language = _language(content)
        cached = self.tool_names.get(sandbox_id) if sandbox_id is not None else None
        if cached is not None and not await self._may_still_use(sandbox_id):
            # Its user left the sandbox's team: its names are checked against no more.
            self.tool_names.pop(sandbox_id, None)
            cached = None
        if cached is None:
            sandbox = await self._sandbox(content.get("sandbox"))  # "no such sandbox"
            cached = await database_sync_to_async(services.sandbox_tool_names)(sandbox)
            self.tool_names[sandbox.pk] = cached
            self._tool_access.setdefault(sandbox.pk, AccessRecheck()).passed()
        # Both languages are checked against the tools: Python names them, bash calls them.
        names: list[str] = cached
        # Parsing and highlighting a 200 KB paste takes half a second of CPU: it must not
        # stall this process's other sockets, and each keystroke's text checked in turn would
        # answer ever later. Only the newest pending text is checked, off the event loop.
        self._pending_check = (version, language, body, names)
        if self._checker is None or self._checker.done():
            self._checker = asyncio.get_running_loop().create_task(self._check_pending())

    async def _check_pending(self) -> None:
        while self._pending_check is not None:
            (version, language, body, names), self._pending_check = self._pending_check, None
            result = await check_off_loop(
                language=language,
                body=body,
                tool_names=names,
                max_bash_chars=settings.JAZZMINE_MAX_BASH_CHARS,
            )
            message: ValidationMessage = {
                "type": "validation",
                "version": version,
                "violations": result.violations,
                "html": result.html,
            }
            await self.send_json(message)

    async def prewarm(self, content: dict[str, Any]) -> None:
        sandbox = await self._sandbox(content.get("sandbox"))
        self.tool_names.pop(sandbox.pk, None)  # tools may have changed: read them again
        if _prewarm_due(sandbox.pk):
            await asyncio.to_thread(sandbox_prewarm, sandbox_id=sandbox.pk)

    async def generate(self, content: dict[str, Any]) -> None:
        loop = await self._loop_setup(content, retry=bool(content.get("retry")))

        async def work() -> None:
            await self.send_json({"type": "generation_started", "session": loop.session_id})
            await generate_attempt(
                loop.task,
                loop.sandbox_name,
                generator=loop.generator,
                llm=loop.llm,
                number=loop.view.attempt,
                on_event=loop.recorder.on_event,
                **loop.previous,
            )
            await self.send_json({"type": "generation_finished", "session": loop.session_id})

        self._start(work(), loop.recorder)

    async def auto(self, content: dict[str, Any]) -> None:
        attempts = min(max(id_number(content.get("max_attempts")) or 3, 1), MAX_AUTO_ATTEMPTS)
        loop = await self._loop_setup(content, retry=True)

        async def work() -> None:
            await self.send_json({"type": "auto_started", "session": loop.session_id})
            await solve(
                loop.task,
                loop.sandbox_name,
                generator=loop.generator,
                llm=loop.llm,
                run=loop.recorder.run,
                max_attempts=attempts,
                on_event=loop.recorder.on_event,
                first_attempt=loop.view.attempt,
                **loop.previous,
            )

        self._start(work(), loop.recorder)

    async def _loop_setup(self, content: dict[str, Any], *, retry: bool) -> _Loop:
        """Open the session and gather what generating its next attempt needs."""
        session, llm = await self._session_and_llm(content)
        language = _language(content)
        view = await database_sync_to_async(services.prompt_for)(
            sandbox=session.sandbox,
            task=session.task,
            session=session,
            retry=retry,
            language=language,
        )
        recorder = AttemptRecorder(
            session=session,
            user=self.user,
            send=self.send_json,
            follow=self.show_run,
            language=language,
        )
        recorder.previous_error = view.previous_error
        generator = await database_sync_to_async(services.loop_generator_for)(
            sandbox=session.sandbox, language=language
        )
        return _Loop(session, llm, view, recorder, generator)

    async def run(self, content: dict[str, Any]) -> None:
        # One trip to the database thread: the sandbox, the attempt and its run, and the
        # run's empty pane (each trip costs a thread hand-over before the run is queued).
        # A big script on a database thread of its own, as an HTTP request's: it waits there
        # for the checker process (`studio.checker`), and the thread every other socket of
        # this process shares would wait with it. A small one keeps the shared thread (a new
        # thread and connection per run cost the way to its first event).
        big = len(str(content.get("body", ""))) >= PROCESS_THRESHOLD_CHARS
        async with _own_database_thread() if big else contextlib.nullcontext():
            attempt, pane = await database_sync_to_async(_run_started)(
                user=self.user,
                sandbox_id=content.get("sandbox"),
                body=content.get("body", ""),
                session_id=_session_id(content),
                task=str(content.get("task", "")),
                attempt_id=id_number(content.get("attempt_id")),
                language=_language(content),
            )
        if attempt.run_id is None:
            await self.send_json(
                {
                    "type": "run_refused",
                    "attempt_id": attempt.pk,
                    "violations": violations_by_line(list(attempt.violations)),
                }
            )
        else:
            await self.send_json(
                {
                    "type": "run_created",
                    "session": str(attempt.session_id),
                    "attempt_id": attempt.pk,
                    "run_id": str(attempt.run_id),
                }
            )
            # The page watches the run on this socket: no second handshake before its events.
            run_id = str(attempt.run_id)
            await self.send_json(RunPaneMessage(type="run_pane", run_id=run_id, html=pane))
            await self.follow_run(run_id)
        if attempt.source == AttemptSource.HUMAN and not attempt.prompt:
            # Once the run is on its way and the page shows it: the prompt a person's attempt
            # answers, for the prompt debugger.
            await database_sync_to_async(services.attempt_prompt_record)(
                attempt=attempt, retry=bool(content.get("retry"))
            )

    async def follow(self, content: dict[str, Any]) -> None:
        """Follow again, after a dropped socket, the run the page shows from its last event."""
        # Text that is no UUID raises in the lookup (ValidationError): it names no run.
        run_id = uuid_text(content.get("run_id"))
        run = await database_sync_to_async(run_for_user)(self.user, run_id) if run_id else None
        if run is None:
            raise PlaygroundError("no such run")
        await self.follow_run(str(run.pk), after=max(0, id_number(content.get("after")) or 0))

    # The run this page follows

    async def show_run(self, run_id: str) -> None:
        """Send a run's whole pane, then stream what comes after what it shows."""
        html, seq = await database_sync_to_async(_pane_html)(run_id)
        await self.send_json(RunPaneMessage(type="run_pane", run_id=run_id, html=html))
        await self.follow_run(run_id, after=seq)

    async def send_run_html(self, run_id: str, html: str) -> None:
        await self.send_json(RunHtmlMessage(type="run_html", run_id=run_id, html=html))

    async def run_status_sent(self, payload: RunStatusPayload) -> None:
        await self.send_json(payload)  # the page's buttons follow the run's status

    async def run_access_lost(self, run_id: str) -> None:
        # The mixin stopped streaming it: the user left the sandbox's team (or was deactivated).
        await self.send_json({"type": "error", "message": "no such run"})

    async def watch(self, content: dict[str, Any]) -> None:
        """Hear when the attempts of the page's session change elsewhere, then say "watching".

        A page reloaded during a generation was rendered before the old page's socket closed
        and stored the generation as stopped: it reads its list again at "watching" (what
        was stored before) and at each "attempts_changed" (what is stored after).
        """
        session_id = _session_id(content)
        owned = (
            session_id is not None
            and await database_sync_to_async(
                PlaygroundSession.objects.filter(pk=session_id, user=self.user).exists
            )()
        )
        if not owned:
            raise PlaygroundError("that playground session is not one of yours")
        group = services.session_group(session_id)
        if group != self.watching:
            if self.watching:
                await self.channel_layer.group_discard(self.watching, self.channel_name)
            await self.channel_layer.group_add(group, self.channel_name)
            self.watching = group
        await self.send_json({"type": "watching", "session": str(session_id)})

    async def attempts_changed(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "attempts_changed", "session": event["session"]})

    async def cancel(self, content: dict[str, Any]) -> None:
        """Stop what this page started: a generation or auto loop, and the run it follows.

        A page reloaded mid-run shows a run this socket never started: it names it, and the
        run page's own rule applies (a run its user may see and stop).
        """
        self._stop_task(STOPPED_BY_CANCEL)
        run_id = self.following or uuid_text(content.get("run_id"))
        if run_id is not None:
            stopped = await database_sync_to_async(_cancel_run)(run_id=run_id, user=self.user)
            if stopped:
                await self.send_json({"type": "run_cancelling", "run_id": run_id})

    # Helpers

    def _stop_task(self, reason: str) -> None:
        """Stop the generation or loop this page started, saying why (see `_start`)."""
        task = getattr(self, "task", None)
        if task is not None and not task.done():
            # By task: the stopped one hears its reason after the next one may have started.
            _STOP_REASONS[task] = reason
            task.cancel()

    def _start(self, work: Any, recorder: AttemptRecorder | None = None) -> None:
        self._stop_task(STOPPED_BY_NEWER)

        async def guarded() -> None:
            try:
                # The loop's database work on a thread of its own (see `run`): the runs it
                # makes wait for the checker process with a big script.
                async with _own_database_thread():
                    await work
            except asyncio.CancelledError:
                # An answer cut short is kept, with why: a reload no longer loses the prompt
                # and what the LLM had sent. Shielded: the cancel must not cancel its store.
                reason = _STOP_REASONS.pop(asyncio.current_task(), STOPPED_BY_CANCEL)
                if recorder is not None:
                    with contextlib.suppress(Exception):
                        await asyncio.shield(recorder.stopped(reason))
                with contextlib.suppress(Exception):
                    await self.send_json({"type": "cancelled"})
                raise
            except CheckerUnavailable as exc:  # a sentence of its own: nothing was recorded
                await self.send_json({"type": "error", "message": str(exc)})
            except Exception as exc:  # report, never kill the socket
                await self.send_json({"type": "error", "message": f"{type(exc).__name__}: {exc}"})

        self.task = asyncio.get_running_loop().create_task(guarded())

    async def _sandbox(self, sandbox_id: Any) -> Any:
        return await database_sync_to_async(_sandbox_for)(self.user, sandbox_id)

    async def _may_still_use(self, sandbox_id: int) -> bool:
        """Tell whether the user may still use a sandbox whose tool names this socket keeps.

        Asked at most once a second (`studio.live.AccessRecheck`), as the run and build
        sockets ask: the names serve every keystroke, and a read per keystroke would cost more.
        """

        async def allowed() -> bool:
            found = await database_sync_to_async(sandbox_for_user)(self.user, sandbox_id)
            return found is not None

        access = self._tool_access.setdefault(sandbox_id, AccessRecheck())
        return await access.still_allowed(allowed)

    async def _session_and_llm(self, content: dict[str, Any]) -> tuple[PlaygroundSession, Any]:
        sandbox = await self._sandbox(content.get("sandbox"))
        task = str(content.get("task", "")).strip()
        if not task:
            raise PlaygroundError("write a task first: it is what the LLM is asked to do")
        llm = await database_sync_to_async(services.llm_config_for)(self.user)
        if llm is None:
            raise PlaygroundError(
                "no LLM is configured: set JAZZMINE_LLM_BASE_URL and JAZZMINE_LLM_MODEL, or "
                "your own endpoint under LLM settings"
            )
        session = await database_sync_to_async(services.session_open)(
            user=self.user, sandbox=sandbox, session_id=_session_id(content), task=task
        )
        await self.send_json({"type": "session", "session": str(session.pk)})
        return session, llm


@dataclass(frozen=True)
class _Loop:
    """A session's next generation: its prompt, its recorder and its generator."""

    session: PlaygroundSession
    llm: Any
    view: services.PromptView
    recorder: AttemptRecorder
    generator: CheckedGenerator

    @property
    def session_id(self) -> str:
        return str(self.session.pk)

    @property
    def task(self) -> str:
        return self.session.task

    @property
    def sandbox_name(self) -> str:
        return self.session.sandbox.name

    @property
    def previous(self) -> dict[str, str | None]:
        """Return the retry context as keyword arguments for the orchestrator."""
        return {
            "previous_script": self.view.previous_script or None,
            "previous_error": self.view.previous_error or None,
        }


class PlaygroundError(Exception):
    """A request the playground cannot serve, with the reason to show."""


def _unknown_message(kind: Any) -> str:
    """Return the error for a message whose type no handler has, naming the types there are."""
    types = ", ".join(PlaygroundConsumer.MESSAGES)
    if kind is None:
        return f'the message has no "type": it is one of {types}'
    if not isinstance(kind, str):
        return f'the message\'s "type" must be text, one of {types}'
    return f"unknown message {kind[:40]!r}: the types are {types}"


def _prewarm_due(sandbox_id: int) -> bool:
    """Tell whether this process should ask the workers to fill a sandbox's pools now.

    Called on the event loop only (no lock): pages flooding `prewarm` cost one ask each
    `PREWARM_EVERY_SECONDS` per sandbox, whatever their number.
    """
    now = time.monotonic()
    if now - _prewarm_asked.get(sandbox_id, float("-inf")) < PREWARM_EVERY_SECONDS:
        return False
    _prewarm_asked[sandbox_id] = now
    return True


def _language(content: dict[str, Any]) -> str:
    return "bash" if content.get("language") == "bash" else "python"


def _session_id(content: dict[str, Any]) -> uuid.UUID | None:
    """Return the session id a message names, or None (a new session) when it names none.

    `session_open` looks it up among the user's own sessions in the sandbox just checked;
    a malformed id must start a session, not end the socket with a database error.
    """
    try:
        return uuid.UUID(str(content.get("session")))
    except ValueError:
        return None


def _sandbox_for(user: Any, sandbox_id: Any) -> Any:
    """Return the sandbox a message names (its id, as sent), if the user may use it."""
    if sandbox_id is None or sandbox_id == "":
        raise PlaygroundError("pick a sandbox first")
    sandbox = sandbox_for_user(user, sandbox_id)
    if sandbox is None:
        raise PlaygroundError("no such sandbox")
    return sandbox


def _run_started(*, user: Any, sandbox_id: Any, body: Any, **attempt: Any) -> tuple[Attempt, str]:
    """Record a person's attempt and start its run; return it with the run's first pane."""
    sandbox = _sandbox_for(user, sandbox_id)
    if not isinstance(body, str) or not body.strip() or len(body) > MAX_BODY_CHARS:
        raise PlaygroundError("there is no script to run")
    started = _run_attempt(user=user, sandbox=sandbox, body=body, **attempt)
    if started.run is None:
        return started, ""
    # Nothing of a run this young is worth reading back: the follow that comes next reads
    # what the worker stored meanwhile, from the first event.
    return started, _pane_render(run_pane_new(started.run))


def _pane_html(run_id: str) -> tuple[str, int]:
    pane = run_pane(Run.objects.select_related("sandbox").get(pk=run_id))
    return _pane_render(pane), pane.seq


def _pane_render(pane: RunPane) -> str:
    # Fed by this socket: the pane opens no socket of its own.
    return render_to_string("runs/_output.html", {"run": pane.run, "pane": pane, "fed": True})


def _cancel_run(*, run_id: str, user: Any) -> bool:
    # As the run page's Cancel: a run its author may still see. The socket notices that its
    # author left the sandbox's team only at the run's next message or catch-up read, and
    # until then it still follows the run: that is no right to stop the team's runs.
    run = run_for_user(user, run_id)
    return run is not None and run_cancel(run=run, user=user)


def _run_attempt(
    *,
    user: Any,
    sandbox: Any,
    session_id: Any,
    task: str,
    body: str,
    attempt_id: int | None,
    language: str = "python",
) -> Attempt:
    session = services.session_open(user=user, sandbox=sandbox, session_id=session_id, task=task)
    attempt = None
    if attempt_id is not None:
        attempt = session.attempts.filter(pk=attempt_id, language=language).first()
    if attempt is not None and attempt.body == body:
        if attempt.run_id is None:
            return services.attempt_run(attempt=attempt, user=user, checked=sandbox)
        # The LLM's script, unedited, run again: still the LLM's.
        return services.attempt_run_again(attempt=attempt, user=user, checked=sandbox)
    # Edited or typed by a person: a new attempt of its own.
    return services.human_attempt_create(
        session=session, user=user, body=body, language=language, checked=sandbox
    )
