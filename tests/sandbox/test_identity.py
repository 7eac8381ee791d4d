"""Each sandbox's uid: drawn in a range no host account uses, never one drawn lately."""

from __future__ import annotations

import threading

import pytest

from jazzmine.sandbox.identity import (
    FIRST_UID,
    LAST_UID,
    RECENT,
    REMAPPED_FIRST_UID,
    REMAPPED_LAST_UID,
    UidDraw,
    sandbox_uid,
    sandbox_user,
)


def test_a_uid_is_past_every_account_and_below_the_signed_limit() -> None:
    uids = [sandbox_uid() for _ in range(2000)]
    assert all(FIRST_UID <= uid <= LAST_UID < 2**31 - 1 for uid in uids)
    assert 65534 < FIRST_UID  # not nobody, whom every sandbox shared


def test_an_engine_that_remaps_users_gets_a_16_bit_uid_below_nobody() -> None:
    uids = [sandbox_uid(remapped=True) for _ in range(2000)]
    assert all(REMAPPED_FIRST_UID <= uid <= REMAPPED_LAST_UID < 65534 for uid in uids)


def test_dockers_user_names_the_uid_and_a_group_of_the_same_id() -> None:
    uid, gid = sandbox_user().split(":")
    assert uid == gid and FIRST_UID <= int(uid) <= LAST_UID


def test_no_uid_comes_again_while_it_is_among_the_last_drawn() -> None:
    # A range barely wider than what is remembered: random draws would repeat at once.
    draw = UidDraw(1, RECENT + 10)
    drawn = [draw() for _ in range(RECENT)]
    assert len(set(drawn)) == RECENT
    # Past RECENT draws the oldest may come again: the range is never exhausted.
    more = [draw() for _ in range(3 * RECENT)]
    assert all(1 <= uid <= RECENT + 10 for uid in more)
    for at in range(0, len(more), 97):
        window = (drawn + more)[at + 1 : at + 1 + RECENT]
        assert len(set(window)) == len(window)


def test_threads_drawing_at_once_get_distinct_uids() -> None:
    draw = UidDraw(1, RECENT + 100)
    got: list[int] = []
    lock = threading.Lock()

    def take() -> None:
        mine = [draw() for _ in range(500)]
        with lock:
            got.extend(mine)

    threads = [threading.Thread(target=take) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 4000 and len(set(got)) == 4000


def test_a_range_no_wider_than_what_is_remembered_is_refused() -> None:
    with pytest.raises(ValueError, match="wider"):
        UidDraw(1, RECENT)


@pytest.mark.docker
def test_this_engine_is_asked_once_whether_it_remaps_users(docker_client) -> None:
    from jazzmine.sandbox.engine import _REMAPS, engine_remaps_users

    remaps = engine_remaps_users(docker_client)
    options = docker_client.info().get("SecurityOptions") or []
    assert remaps == any("name=userns" in option for option in options)
    assert _REMAPS[docker_client] is remaps
