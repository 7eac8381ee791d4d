"""Events are stored in arrival order: alone when the recorder is idle, together when it is busy."""

from __future__ import annotations

import asyncio

from jazzmine_web.runs.recorder import EventRecorder


class Store:
    def __init__(self, *, pause: float = 0.0, refuse_seq: int | None = None) -> None:
        self.batches: list[list[int]] = []
        self.pause = pause
        self.refuse_seq = refuse_seq

    async def __call__(self, batch):
        self.batches.append([e["seq"] for e in batch])
        await asyncio.sleep(self.pause)
        return self.refuse_seq not in self.batches[-1]


def event(seq: int) -> dict:
    return {"seq": seq, "type": "log", "data": {"message": str(seq)}, "ts": 0.0}


async def test_an_idle_recorder_stores_an_event_at_once_and_alone():
    store = Store()
    recorder = EventRecorder(store)
    recorder.add(event(1))
    await asyncio.sleep(0)  # one turn of the loop, no timer
    await asyncio.sleep(0)
    assert store.batches == [[1]]
    recorder.add(event(2))
    assert await recorder.close() is True
    assert store.batches == [[1], [2]]


async def test_what_arrives_during_a_slow_write_is_stored_in_one_batch_in_order():
    store = Store(pause=0.05)
    recorder = EventRecorder(store, most=100)
    recorder.add(event(1))
    await asyncio.sleep(0.01)  # the first write is under way
    for seq in range(2, 251):
        recorder.add(event(seq))
    assert await recorder.close() is True
    assert store.batches[0] == [1]
    assert store.batches[1:] == [list(range(2, 102)), list(range(102, 202)), list(range(202, 251))]


async def test_a_refused_batch_stops_the_recorder_and_nothing_after_it_is_stored():
    store = Store(pause=0.01, refuse_seq=3)
    recorder = EventRecorder(store)
    recorder.add(event(1))
    await asyncio.sleep(0.005)
    for seq in (2, 3, 4):
        recorder.add(event(seq))
    assert await recorder.task is False
    recorder.add(event(5))  # ignored: the run was ended for the refusal
    assert await recorder.close() is False
    assert store.batches == [[1], [2, 3, 4]]


async def test_flushed_waits_for_the_write_in_progress_and_what_queued_behind_it():
    store = Store(pause=0.05)
    recorder = EventRecorder(store)
    recorder.add(event(1))
    await asyncio.sleep(0.01)  # the first write is under way
    recorder.add(event(2))
    await recorder.flushed()
    assert store.batches == [[1], [2]]
    assert not recorder.task.done()  # flushed, not closed: more events may come
    recorder.add(event(3))
    assert await recorder.close() is True
    assert store.batches == [[1], [2], [3]]


async def test_flushed_returns_at_once_when_idle_and_when_a_refusal_stopped_it():
    store = Store(pause=0.01, refuse_seq=1)
    recorder = EventRecorder(store)
    await asyncio.wait_for(recorder.flushed(), 1)  # nothing was ever added
    recorder.add(event(1))
    recorder.add(event(2))
    await asyncio.wait_for(recorder.flushed(), 1)  # refused: it will never store event 2
    assert recorder.task.done() and recorder.task.result() is False
    await asyncio.wait_for(recorder.flushed(), 1)
