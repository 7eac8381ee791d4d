"""The run worker: one thread with its own event loop that executes queued runs.

Runs never execute in a request or a consumer. Views and consumers create a `Run` row and
queue its id; the Celery task claims it here on its own thread, the worker prepares the
sandbox image, takes a warm sandbox from the pool of that image, and records every event
(database first, then the run's channel group). After the claim, database work happens on one
dedicated thread so that the loop never blocks on SQLite and the events of a run are written
in order; nothing slow shares it (an image build runs elsewhere), since every run of the
worker stores its events there.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import dataclasses
import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection, connections
from django.utils import timezone

from jazzmine.bash import BashCall
from jazzmine.bash.events import bash_call_event, bash_final_events
from jazzmine.bash.sandbox import run_bash_in_sandbox
from jazzmine.interrupts import Interrupt
from jazzmine.sandbox import Outcome, RunLimits, make_runner
from jazzmine.sandbox.builder import KEYED_REPOSITORY_PREFIX, sandbox_image_tags
from jazzmine.sandbox.docker_runner import DockerOneShot, DockerRunner, Vet, remove_labelled
from jazzmine.sandbox.engine import EngineUnavailable
from jazzmine.sandbox.errors import SandboxStale
from jazzmine.sandbox.pool import WarmPool
from jazzmine.sandbox.request import RunRequest
from jazzmine.sandbox.workdirs import workdir_remove

from ..studio.db import DATABASE_UNREACHABLE
from . import services
from .credentials import run_credentials_revoke
from .models import RunStatus
from .preparation import (
    ClaimUnsettled,
    ImageToMake,
    Prepared,
    run_claim_prepare,
    run_wheels_gate,
    run_wheels_refused,
    sandbox_current_image,
)
from .recorder import EventRecorder, Store
from .selectors import run_status_outcome

logger = logging.getLogger(__name__)

# How long a run's events wait for a database that stopped answering before the run fails
# (its sandbox's own time limit ends most runs sooner), and the pause between two tries.
DATABASE_PATIENCE_SECONDS = 300.0
DATABASE_RETRY_SECONDS = 1.0
# How often a replaced warm pool looks whether a run still waits on it before it closes.
POOL_CLOSE_POLL_SECONDS = 0.2


class RunExecutor:
    """Execute runs on a background event loop, with a warm pool per sandbox image."""

    def __init__(self, *, pool_size: int | None = None) -> None:
        # 0 turns the warm pool off: every run creates and starts its own container.
        self.pool_size = settings.JAZZMINE_POOL_SIZE if pool_size is None else pool_size
        self._loop = asyncio.new_event_loop()
        self._db = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="runs-db"
        )
        self._pools: dict[tuple[str, RunLimits], WarmPool] = {}
        self._current: dict[int, tuple[str, RunLimits]] = {}  # sandbox id -> its pool's key
        self._docker: DockerRunner | None = None
        self._futures: dict[str, concurrent.futures.Future[str | None]] = {}
        self._tasks: dict[str, asyncio.Task[str]] = {}  # run id -> its task (loop thread only)
        # run id -> how and why it was stopped (a person's cancel, its worker stopping)
        self._cancelled: dict[str, tuple[Outcome, str]] = {}
        self._stopping: set[str] = set()  # runs told to stop (by a broadcast or a heartbeat)
        self._stopping_lock = threading.Lock()
        self._known_images: set[str] = set()  # image tags known to exist in the engine
        self._wheels_by_image: dict[str, list[str] | None] = {}  # image id -> its wheels
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._main, name="run-worker", daemon=True)
        self._thread.start()
        self._started.wait()

    # Public API (any thread)

    def submit(
        self, run_id: Any, *, worker: str, stop: Interrupt | None = None
    ) -> concurrent.futures.Future[str | None]:
        """Claim a queued run for `worker` on the calling thread, and execute it.

        The future resolves to the run's final status, or None when the run was not this
        worker's to execute (another worker or a cancel had it first, or the database did
        not answer the claim before `stop` fired or the patience ran out: the run stays
        queued, and the reaper queues it again).
        """
        key = str(run_id)
        claim: concurrent.futures.Future[Prepared | None] = concurrent.futures.Future()
        future = asyncio.run_coroutine_threadsafe(self._execute(run_id, claim), self._loop)
        self._futures[key] = future
        future.add_done_callback(lambda _f: self._forget(key))
        # The claim and its reads run here, on the task's own thread, while the loop takes
        # the run up: one hand-over between threads fewer before the sandbox starts, and no
        # wait behind other runs' events on the DB thread. The task's connection was checked
        # as the task started (`workers.tasks`).
        try:
            prepared = self._claim(run_id, worker=worker, stop=stop)
        except BaseException as exc:
            claim.set_exception(exc)  # the loop's task hears it, as its own failure
            if not isinstance(exc, Exception):
                raise
        else:
            claim.set_result(prepared)
        return future

    def _claim(self, run_id: Any, *, worker: str, stop: Interrupt | None) -> Prepared | None:
        """Claim a run and read what it needs, waiting out a database that does not answer.

        Before the claim is known to be made nothing of the run is this worker's: the claim is
        tried again (reads, and one conditional write recognised by its time) rather than the
        run ended, which would end a run another worker may be executing.
        """
        at = timezone.now()
        deadline = time.monotonic() + DATABASE_PATIENCE_SECONDS
        again = False
        while True:
            try:
                # `frozenset` copies the loop's set in one step under the GIL.
                known = frozenset(self._known_images)
                return run_claim_prepare(
                    run_id=run_id, worker=worker, known_images=known, at=at, again=again
                )
            except ClaimUnsettled as exc:
                logger.warning("run %s: the database does not answer its claim: %s", run_id, exc)
                if time.monotonic() >= deadline or _stopped_within(stop, DATABASE_RETRY_SECONDS):
                    logger.warning("run %s: left queued for the reaper to queue again", run_id)
                    return None
                again = True
                close_old_connections()  # a connection the outage broke is not used again

    def _forget(self, run_id: str) -> None:
        self._futures.pop(run_id, None)
        self._stopping.discard(run_id)

    def cancel(self, run_id: Any, *, reason: str, outcome: Outcome = Outcome.CANCELLED) -> bool:
        """Stop a run this worker is executing (its sandbox is killed); tell whether it was.

        It ends with `outcome` (a person's cancel unless told otherwise) and `reason`.
        """
        future = self._futures.get(str(run_id))
        if future is None or future.done():
            return False
        with self._stopping_lock:  # a broadcast and a heartbeat may tell it at once
            if str(run_id) in self._stopping:
                return True  # told already: a second cancel would cut the first one's clean-up
            self._stopping.add(str(run_id))
        self._cancelled[str(run_id)] = (outcome, reason)
        # Cancel the run's task on the loop, not the future: the task records the cancel and
        # removes the sandbox, and the future then resolves to the run's final status.
        self._loop.call_soon_threadsafe(self._cancel_task, str(run_id))
        return True

    def _cancel_task(self, run_id: str) -> None:
        task = self._tasks.get(run_id)
        if task is not None:
            task.cancel()

    def learn_images(self, timeout: float = 10.0) -> int:
        """Learn which sandbox images the engine holds; return how many are this deployment's.

        Called as the worker starts, so that the first run of a sandbox after a restart
        starts at once rather than waiting while the engine is asked about its image. An
        engine slower than `timeout` delays the worker's first task by no more than that.
        """
        future = asyncio.run_coroutine_threadsafe(self._learn_images(), self._loop)
        return future.result(timeout)

    async def _learn_images(self) -> int:
        runner = self._docker_runner()  # its client connects on first use: off the loop
        tags = await asyncio.get_running_loop().run_in_executor(
            None, lambda: sandbox_image_tags(runner.client)
        )
        self._known_images.update(tags)  # on the loop, where claims read the set
        # Said of this deployment's alone: other deployments on the engine keep theirs.
        ours = f"{KEYED_REPOSITORY_PREFIX}{settings.JAZZMINE_DEPLOYMENT}-"
        return sum(tag.startswith(ours) for tag in tags)

    def prewarm(self, sandbox_id: int) -> None:
        """Start filling the pool of a sandbox whose image exists, so its first run is warm."""
        asyncio.run_coroutine_threadsafe(self._prewarm(sandbox_id), self._loop)

    def shutdown(self, timeout: float = 30.0) -> None:
        """Remove every pooled container and stop the worker."""
        if not self._loop.is_running():
            return
        labels = [pool.label for pool in self._pools.values()]
        future = asyncio.run_coroutine_threadsafe(self._close_pools(), self._loop)
        with contextlib.suppress(Exception):
            future.result(timeout)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)
        # The DB thread's connection goes back (to PostgreSQL's pool): a thread that ends
        # holding it keeps it from every other thread of the process for good.
        with contextlib.suppress(Exception):
            self._db.submit(connections.close_all).result(timeout)
        self._db.shutdown(wait=True)
        # At interpreter exit the async close above cannot hand work to threads any more
        # (the default executor refuses new jobs), so sweep each pool's containers directly.
        if self._docker is not None and labels:
            with contextlib.suppress(Exception):
                for label in labels:
                    remove_labelled(self._docker.client, label)

    # The worker thread

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(self._started.set)
        self._loop.run_forever()

    def _in_db(self, fn: Any, /, **kwargs: Any) -> asyncio.Future[Any]:
        """Queue a database call on the one DB thread, which keeps the order; await to wait."""
        return self._loop.run_in_executor(self._db, lambda: _with_connection(fn, **kwargs))

    async def _execute(
        self, run_id: Any, claimed: concurrent.futures.Future[Prepared | None]
    ) -> str | None:
        key = str(run_id)
        self._tasks[key] = asyncio.current_task()  # type: ignore[assignment]
        claim = asyncio.wrap_future(claimed)
        try:
            if key in self._cancelled:
                # A cancel came before this task could hear it, with the claim in flight:
                # it is handled as one that comes during the claim.
                raise asyncio.CancelledError
            try:
                # Shielded: a cancel must not lose whether the claim made the run ours.
                prepared = await asyncio.shield(claim)
            except Exception as exc:  # raised only once the run is ours
                await self._prepare_failed(run_id, exc)
                return RunStatus.FAILED
            if prepared is None:
                return None  # not ours: another worker (or a cancel) had it first
            if prepared.image_source is not None and not self._image_proven(prepared):
                try:
                    prepared = await self._make_image(prepared)
                except Exception as exc:
                    await self._prepare_failed(run_id, exc)
                    return RunStatus.FAILED
            if prepared.wheels_check and prepared.bash is not None:
                # A Python run's check is of the sandbox it gets (`_wheels_vet`); a bash run's
                # container is made from the image read here, by its id.
                prepared = await self._wheels_gate(prepared)
            if prepared.bash is not None:
                return await self._execute_bash(prepared)
            return await self._execute_python(prepared)
        except asyncio.CancelledError:
            stopped = self._cancelled.pop(key, None)
            if stopped is None:
                raise  # the loop is closing: the reaper ends the run once its heartbeat stops
            if not await _ours(claim):
                return None  # a queued run's cancel ends it where it is asked for
            outcome, reason = stopped
            await self._fail(run_id, outcome, reason)
            return RunStatus.FAILED
        except Exception as exc:  # the worker must survive anything one run does
            logger.exception("run %s failed in the worker", run_id)
            engine = isinstance(exc, EngineUnavailable)  # e.g. gone from under a bash run
            await self._fail(
                run_id,
                Outcome.ENGINE_UNAVAILABLE if engine else Outcome.CONTAINER_CRASH,
                str(exc) if engine else f"the run worker failed: {exc}",
            )
            return RunStatus.FAILED
        finally:
            self._tasks.pop(key, None)
            if await _ours(claim):
                # Shielded: a cancel that lands now must not leave the run's tokens alive.
                revoke = self._patiently(
                    run_id,
                    "its tokens stay until it answers",
                    lambda _again: self._in_db(run_credentials_revoke, run_id=run_id),
                )
                await asyncio.shield(revoke)
                _runtime_dir_remove(claim)

    async def _wheels_gate(self, prepared: Prepared) -> Prepared:
        """Read the wheels of the image a bash run starts; withhold its secrets unless accepted.

        Read from the engine for every such run (one inspect, a few ms, only for sandboxes
        with dependencies and secrets), not cached by tag: a tag is remade with other files
        when its image was removed and the index changed since, by this worker or another.
        The run is then built on the id read, not on whatever the tag names by then.
        """
        source = prepared.image_source
        assert source is not None
        loop = asyncio.get_running_loop()
        image_id, wheels = None, None
        try:
            found = await loop.run_in_executor(None, source.builder.image_identity, source.tag)
        except Exception:
            logger.exception("run %s: cannot read its image's wheels", prepared.run_id)
            found = None  # fail closed: nobody can tell what it holds
        if found is not None:
            image_id, wheels = found
        gated = await self._in_db(run_wheels_gate, prepared=prepared, image_wheels=wheels)
        return dataclasses.replace(gated, image_id=image_id)

    def _wheels_vet(self, prepared: Prepared) -> Vet:
        """Return the check of the sandbox a Python run gets: no secret unless its image's
        wheels are the ones an admin accepted.

        Asked of the sandbox itself once it is taken, not of the tag: a ready sandbox runs
        the image its tag named when it started, and the tag may name another one by now
        (removed and made again while the index served other files). One that is not current
        is stale: it goes, and the run takes one of the image the tag names now.
        """
        source = prepared.image_source
        assert source is not None

        async def vet(image_id: str) -> RunRequest:
            wheels = await self._image_wheels(source.builder, image_id)
            if not run_wheels_refused(prepared=prepared, image_wheels=wheels):
                return prepared.request
            if await self._tag_moved(source, image_id):
                raise SandboxStale(f"{source.tag} names another image than {image_id} now")
            gated = await self._in_db(run_wheels_gate, prepared=prepared, image_wheels=wheels)
            if gated.notes != prepared.notes:  # RUNNING was told without this one
                await self._in_db(
                    services.run_status_announce,
                    run_id=prepared.run_id,
                    status=RunStatus.RUNNING,
                    notes=gated.notes,
                )
            return gated.request

        return vet

    async def _image_wheels(self, builder: Any, image_id: str) -> list[str] | None:
        """Return the wheels an image holds, by id; kept, since an image id names its content."""
        if image_id in self._wheels_by_image:
            return self._wheels_by_image[image_id]
        loop = asyncio.get_running_loop()
        try:
            found = await loop.run_in_executor(None, builder.image_identity, image_id)
        except Exception:
            logger.exception("cannot read the wheels of image %s", image_id)
            return None  # fail closed, and asked again next time
        if found is None:
            return None
        self._wheels_by_image[image_id] = found[1]
        return found[1]

    async def _tag_moved(self, source: ImageToMake, image_id: str) -> bool:
        """Tell whether a run's tag names another image than `image_id` now (or none)."""
        loop = asyncio.get_running_loop()
        try:
            found = await loop.run_in_executor(None, source.builder.image_identity, source.tag)
        except Exception:
            return False  # cannot tell: the run goes on, with its secrets withheld
        return found is None or found[0] != image_id

    def _batch_store(
        self,
        run_id: Any,
        running: asyncio.Future[Any],
        first: Callable[[], services.FirstEvent | None],
    ) -> Store:
        """Return how a run's `EventRecorder` stores its batches (a Python or a bash run's).

        The first batch waits for RUNNING (its failure is the run's, before any event is
        stored) and carries `first()`: how long the run took to its first event.
        """
        batches = 0

        async def store(batch: list[dict[str, Any]]) -> bool:
            nonlocal batches
            if batches == 0:
                await running
            batches += 1
            return await self._events_stored(run_id, batch, first() if batches == 1 else None)

        return store

    async def _events_stored(
        self, run_id: Any, batch: list[dict[str, Any]], first: services.FirstEvent | None
    ) -> bool:
        """Store a batch of a run's events; tell whether the database kept them all.

        While the database does not answer (a restart, a failover), the batch waits and is
        handed over again (`_patiently`): the sandbox goes on, what it emits meanwhile queues
        behind (`EventRecorder`), and nothing of it is lost. Failing the run at the pool's
        first timeout ended every run that said anything during a restart of more than 20 s.
        """
        stored = await self._patiently(
            run_id,
            "its events wait",
            lambda again: self._in_db(
                services.run_record_events, run_id=run_id, events=batch, first=first, again=again
            ),
        )
        return bool(stored)

    async def _patiently(
        self, run_id: Any, what: str, write: Callable[[bool], asyncio.Future[Any]]
    ) -> Any:
        """Hand a run's write to the database until it answers, for `DATABASE_PATIENCE_SECONDS`.

        `write(again)` makes the call; `again` tells a try after one whose answer was lost,
        which may have been stored. A run's end is written this way as well as its events: an
        end lost to a database that was busy or restarting for a moment left the run `running`
        with nobody to end it but the reaper, and then as lost rather than as what it was.
        """
        deadline = time.monotonic() + DATABASE_PATIENCE_SECONDS
        again = False
        while True:
            try:
                return await write(again)
            except DATABASE_UNREACHABLE as exc:
                if time.monotonic() >= deadline:
                    raise
                logger.warning("run %s: the database does not answer, %s: %s", run_id, what, exc)
                again = True
                await asyncio.sleep(DATABASE_RETRY_SECONDS)

    async def _fail(self, run_id: Any, outcome: Outcome, message: str) -> None:
        """End a run the sandbox never reported on, waiting out a database that does not answer.

        `services.run_fail` leaves a run that has ended alone, so a try whose answer was lost
        is not written twice.
        """
        await self._patiently(
            run_id,
            "its end waits",
            lambda _again: self._in_db(
                services.run_fail, run_id=run_id, outcome=outcome, message=message
            ),
        )

    async def _prepare_failed(self, run_id: Any, exc: Exception) -> None:
        outcome = Outcome.ENGINE_UNAVAILABLE if _is_engine_error(exc) else Outcome.BUILD_FAILED
        await self._fail(run_id, outcome, str(exc))

    def _image_proven(self, prepared: Prepared) -> bool:
        """Tell whether the run may start on the image this worker knows, asking nothing.

        What the worker knew can be stale (an operator or another worker's prune removed the
        image). A Python run's sandbox that cannot start for that makes the image again and
        starts once more (`_image_remade`), so its start is the check. A bash run's runner
        cannot, so it asks the engine once (a few ms against the hundreds of its container).
        """
        return prepared.image_known and prepared.bash is None

    async def _make_image(self, prepared: Prepared) -> Prepared:
        """Find, else build, a run's image off the DB thread, which other runs' events need.

        Return the run as it now stands: a run the claim stored RUNNING whose image had to be
        built again is PREPARING meanwhile, and RUNNING is stored once more when it starts.
        """
        if not await self._image_ensure(prepared):
            return prepared
        # A pool of an image that went away holds only its failed starts: start afresh.
        stale = self._pools.pop((prepared.image, prepared.limits), None)
        if stale is not None:
            self._loop.create_task(_close_when_idle(stale))
        return dataclasses.replace(prepared, image_known=False)

    async def _image_ensure(self, prepared: Prepared) -> bool:
        """Make a run's image unless the engine has it; tell whether it had to be built.

        Another worker on this engine may have made it: then nothing is being built, and the
        run must not say so. Else the run is PREPARING "building image" meanwhile.
        """
        source = prepared.image_source
        assert source is not None
        loop = asyncio.get_running_loop()
        if await loop.run_in_executor(None, source.exists):
            self._known_images.add(source.tag)
            return False
        self._known_images.discard(source.tag)
        await self._in_db(
            services.run_set_status,
            run_id=prepared.run_id,
            status=RunStatus.PREPARING,
            message="building image",
        )
        # An image tag names its content, so once it exists it stays right.
        self._known_images.add(await loop.run_in_executor(None, source.ensure))
        return True

    async def _image_remade(self, prepared: Prepared) -> bool:
        """Make a run's image again, gone when its sandbox started; tell whether it exists now.

        The worker knew the image, and it was removed since (an operator's prune, another
        worker's): the pool's ready sandboxes still serve runs, but a sandbox started now
        cannot. Nothing of the script ran yet, so the image is made again and the start tried
        once more, instead of failing the run.
        """
        if prepared.image_source is None:
            return False
        try:
            built = await self._image_ensure(prepared)
        except Exception:
            logger.exception("run %s: its image could not be made again", prepared.run_id)
            return False  # the run ends with its start's own failure
        if built:  # it said PREPARING meanwhile: RUNNING is stored again
            await self._running(dataclasses.replace(prepared, image_known=False))
        return True

    async def _execute_python(self, prepared: Prepared) -> str:
        run_id = prepared.run_id
        docker: WarmPool | DockerOneShot | None = None
        warm = None
        if prepared.backend == "docker" and self.pool_size > 0:
            docker = self._pool(prepared.sandbox_id, prepared.image, prepared.limits)
            warm = docker.ready_count > 0
        elif prepared.backend == "docker":
            docker, warm = self._docker_runner().bind(prepared.image, prepared.limits), False
        # The request goes to the sandbox while RUNNING is announced: queued on the one DB
        # thread before any event of the run, so watchers hear it first, without the script
        # waiting for it.
        running = self._running(prepared)

        async def remake() -> bool:
            nonlocal warm
            warm = False  # the run waits for its image: not a warm start
            return await self._image_remade(prepared)

        if docker is not None:
            vet = self._wheels_vet(prepared) if prepared.wheels_check else None
            events = docker.run(prepared.request, remake=remake, vet=vet)
        else:  # bubblewrap: the run's staged directory, removed when it ends
            target = prepared.runtime_dir or prepared.image
            runner = make_runner(prepared.backend, target, prepared.limits, remove_runtime_dir=True)
            events = runner.run(prepared.request)
        dispatched = time.monotonic()
        first_ms: float | None = None  # when the first event reached this worker
        store = self._batch_store(run_id, running, lambda: (first_ms or 0.0, warm))

        async def read(recorder: EventRecorder) -> None:
            nonlocal first_ms
            async for event in events:
                if first_ms is None:
                    first_ms = round((time.monotonic() - dispatched) * 1000, 2)
                recorder.add(event.to_dict())
                if event.type == "exit":
                    # Asking for more now would remove the sandbox and start the pool's
                    # next one: engine calls that take both cores for tens of milliseconds
                    # while this run's last events are still on their way to the database
                    # and the watchers (a short script's first event among them).
                    await recorder.flushed()

        recorder = EventRecorder(store)
        reader = asyncio.get_running_loop().create_task(read(recorder))
        try:
            await asyncio.wait({reader, recorder.task}, return_when=asyncio.FIRST_COMPLETED)
            if reader.done():
                await recorder.close()  # what was read is stored, even if the stream failed
                reader.result()  # a failed stream is the run's failure
            # Else an event was refused and the run ended for it: stop its sandbox now
            # rather than run a script nobody can see to its end.
        finally:
            for task in (reader, recorder.task):
                task.cancel()
            # The reader's cancel reaches the sandbox stream, which removes its container.
            await asyncio.gather(reader, recorder.task, return_exceptions=True)
            await events.aclose()
            await running
        status, outcome = await self._in_db(run_status_outcome, run_id=run_id)
        if outcome == Outcome.BUILD_FAILED:
            self._known_images.discard(prepared.image)
        if status not in RunStatus.finished():
            # A runner always ends with an exit event; if one ever does not, say so.
            await self._fail(
                run_id, Outcome.CONTAINER_CRASH, "the sandbox ended without reporting how"
            )
            status = RunStatus.FAILED
        return status

    async def _execute_bash(self, prepared: Prepared) -> str:
        """Run a bash script in bashkit inside the sandbox; each builtin call is an event."""
        run_id = prepared.run_id
        assert prepared.bash is not None
        running = self._running(prepared)
        seq = itertools.count(1)
        dispatched = time.monotonic()
        first_ms: float | None = None
        # A script that called no builtin has no first call to time.
        recorder = EventRecorder(
            self._batch_store(
                run_id, running, lambda: None if first_ms is None else (first_ms, False)
            )
        )

        def record(kind: str, data: Any) -> None:
            recorder.add({"seq": next(seq), "type": kind, "data": data, "ts": time.time()})

        def on_call(call: BashCall) -> None:
            nonlocal first_ms
            if first_ms is None:
                first_ms = round((time.monotonic() - dispatched) * 1000, 2)
            record("intermediate", bash_call_event(call))

        try:
            result = await run_bash_in_sandbox(
                prepared.request.script,
                sandbox_image=prepared.image,
                specs=prepared.bash.specs,
                limits=prepared.limits,
                bash_limits=prepared.bash.limits,
                secrets=dict(prepared.request.secrets),
                tool_secrets=prepared.request.tool_secrets,
                on_call=on_call,
                allowed_tools=prepared.request.allowed_tools,
                sandbox_image_id=prepared.image_id,
            )
            for kind, data in bash_final_events(result):
                record(kind, data)
            await recorder.close()
        finally:
            recorder.task.cancel()
            await asyncio.gather(recorder.task, return_exceptions=True)
            await running
        status, _outcome = await self._in_db(run_status_outcome, run_id=run_id)
        return status

    def _running(self, prepared: Prepared) -> asyncio.Future[Any]:
        """Store RUNNING unless the claim did, and tell the run's watchers (on the DB thread)."""
        if prepared.running:
            return self._in_db(
                services.run_status_announce,
                run_id=prepared.run_id,
                status=RunStatus.RUNNING,
                notes=prepared.notes,
            )
        return self._in_db(
            services.run_set_status,
            run_id=prepared.run_id,
            status=RunStatus.RUNNING,
            notes_told=prepared.notes,
            backend=prepared.backend,
            image=prepared.image,
        )

    def _docker_runner(self) -> DockerRunner:
        if self._docker is None:
            self._docker = DockerRunner()
        return self._docker

    def _pool(self, sandbox_id: int, image: str, limits: RunLimits) -> WarmPool:
        key = (image, limits)
        pool = self._pools.get(key)
        if pool is None:
            pool = WarmPool(self._docker_runner(), image, limits, size=self.pool_size)
            self._pools[key] = pool
            self._loop.create_task(pool.start(wait=False))
        # One current pool per sandbox: a rebuilt image or new limits make the older pool's
        # idle containers useless, and they would pin the old image.
        old = self._current.get(sandbox_id)
        self._current[sandbox_id] = key
        if old is not None and old != key and old not in self._current.values():
            stale = self._pools.pop(old, None)
            if stale is not None:
                self._loop.create_task(_close_when_idle(stale))
        return pool

    async def _prewarm(self, sandbox_id: int) -> None:
        if self.pool_size == 0:
            return
        with contextlib.suppress(Exception):
            found = await self._in_db(sandbox_current_image, sandbox_id=sandbox_id)
            if found is not None:
                image, limits = found
                self._known_images.add(image)
                self._pool(sandbox_id, image, limits)

    async def _close_pools(self) -> None:
        # Stop the runs in progress (the next process marks them interrupted); the pools'
        # own start tasks are left to finish so that no half-created container escapes.
        for future in list(self._futures.values()):
            future.cancel()
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            with contextlib.suppress(Exception):
                await pool.close()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        if others:  # let cancelled runs unwind before the loop stops
            await asyncio.wait(others, timeout=5)


def _stopped_within(stop: Interrupt | None, seconds: float) -> bool:
    """Wait `seconds`, less if `stop` fires meanwhile; tell whether it fired."""
    if stop is None:
        time.sleep(seconds)
        return False
    return stop.wait(seconds)


def _with_connection(fn: Any, **kwargs: Any) -> Any:
    """Run a database function on the worker's DB thread with a usable connection."""
    close_old_connections()
    return fn(**kwargs)


def _runtime_dir_remove(claim: asyncio.Future[Prepared | None]) -> None:
    """Remove a bubblewrap run's staged directory, should its runner never have started.

    Its runner removes it when it ends; a run cancelled or failed before (its image, say)
    would leave it, held, for as long as the worker lives.
    """
    if claim.done() and not claim.cancelled() and claim.exception() is None:
        prepared = claim.result()
        if prepared is not None and prepared.runtime_dir is not None:
            workdir_remove(prepared.runtime_dir)


async def _ours(claim: asyncio.Future[Prepared | None] | None) -> bool:
    """Tell whether a run's claim made it this worker's (waiting for a claim in flight)."""
    if claim is None:
        return False
    try:
        return await asyncio.shield(claim) is not None
    except asyncio.CancelledError:
        raise
    except Exception:
        return True  # the claim raises only once the run is ours


def _is_engine_error(exc: Exception) -> bool:
    if isinstance(exc, EngineUnavailable):
        return True
    # A build reports the engine failing under it in its own error's text (BuildError).
    text = f"{type(exc).__name__}: {exc}".lower()
    return "engine" in text or ("docker" in text and ("connect" in text or "socket" in text))


_executor: RunExecutor | None = None
_executor_lock = threading.Lock()


def executor() -> RunExecutor:
    """Return this worker process's run executor, starting it once."""
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = RunExecutor()
            atexit.register(executor_shutdown)
        return _executor


def executor_start() -> None:
    """Start this worker's run executor with the engine's images known (as the worker starts).

    The engine may be down: the worker still starts, and each run asks about its image.
    """
    try:
        known = executor().learn_images()
    except Exception as exc:
        logger.warning("could not list the Docker engine's sandbox images: %s", exc)
    else:
        logger.info("the Docker engine holds %d sandbox image(s) of this deployment", known)


def executor_shutdown() -> None:
    """Stop this process's run worker, if it was started."""
    global _executor
    with _executor_lock:
        if _executor is not None:
            _executor.shutdown()
            _executor = None
    connection.close()


async def _close_when_idle(pool: WarmPool) -> None:
    """Close a replaced pool once no run uses it.

    A run whose image another run had just built, or of a sandbox's code from before an
    edit, may be waiting for a sandbox of the very pool being replaced, or running in one:
    closed under it, the pool started none and the run waited, RUNNING with a live heartbeat,
    for ever (or its container went). It gets its sandbox and ends; then the pool goes. The
    first look waits a moment: a run handed the pool just now starts using it at the loop's
    next turn.
    """
    await asyncio.sleep(POOL_CLOSE_POLL_SECONDS)
    while pool.busy:
        await asyncio.sleep(POOL_CLOSE_POLL_SECONDS)
    await pool.close()
