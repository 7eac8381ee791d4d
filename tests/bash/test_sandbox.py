"""Bash orchestration inside the sandbox container: interpreter and tools never run here."""

from __future__ import annotations

import contextlib
import uuid

import docker
import pytest

from jazzmine.bash import BashLimits, specs_for_sandbox
from jazzmine.bash.sandbox import (
    ensure_bash_image,
    legacy_bash_images_remove,
    run_bash_in_sandbox,
)
from jazzmine.core.tools import SandboxConfig, ToolParameter, ToolRegistry
from jazzmine.sandbox import RunLimits, SandboxBuilder
from jazzmine.sandbox.builder import DERIVED_FROM_LABEL
from jazzmine.sandbox.identity import FIRST_UID, LAST_UID
from jazzmine.scripttools import load_tool_dir, register_script_tool
from tests.scripttools.samples import RSI

pytestmark = pytest.mark.docker

GET_USER = """
def get_user(id: int) -> ToolResponse:
    import os
    return ToolResponse(success=True, data={"id": id, "name": "Ada", "uid": os.getuid(),
                                            "token": os.environ.get("PEEK_TOKEN")})
"""
PEEK = """
def peek(name: str) -> ToolResponse:
    import os
    return ToolResponse(success=True, data=os.environ.get(name))
"""
LIST_ORDERS = """
def list_orders(user_id: int, status: str = "open") -> ToolResponse:
    print("a tool printing on stdout must not corrupt the trace")
    orders = [{"id": 1, "total": 5}, {"id": 2, "total": 7}]
    return ToolResponse(success=True, data=[dict(o, user_id=user_id) for o in orders])
"""
STALL = """
def stall() -> ToolResponse:
    import time
    time.sleep(60)
    return ToolResponse(success=True)
"""


@pytest.fixture(scope="module")
def sandbox(docker_client, base_image, tmp_path_factory):
    registry = ToolRegistry()
    registry.register_source(
        GET_USER,
        sandbox="default",
        description="Fetch a user by id",
        parameters=[ToolParameter("id", "int", "User id", required=True)],
    )
    registry.register_source(
        LIST_ORDERS,
        sandbox="default",
        description="List a user's orders",
        parameters=[
            ToolParameter("user_id", "int", "Owner", required=True),
            ToolParameter("status", "str", "Order status", options=["open", "closed"]),
        ],
    )
    registry.register_source(STALL, sandbox="default", description="Never finishes")
    registry.register_source(
        PEEK,
        sandbox="default",
        description="Read an environment variable",
        parameters=[ToolParameter("name", "str", "Its name", required=True)],
        secrets=["PEEK_TOKEN"],
    )
    rsi = load_tool_dir(RSI)
    register_script_tool(registry, rsi)
    builder = SandboxBuilder(
        registry, client=docker_client, cache_dir=tmp_path_factory.mktemp("cache")
    )
    image = builder.ensure_image("default").tag
    return image, specs_for_sandbox(registry, "default", script_tools=[rsi])  # fmt: skip


async def test_a_bash_script_pipes_two_tools_through_jq_inside_the_sandbox(sandbox, docker_client):
    image, specs = sandbox
    seen = []
    result = await run_bash_in_sandbox(
        "uid=$(get_user --id 7 | jq -r .id)\n"
        "list_orders --user_id \"$uid\" | jq '[.[].total] | add'\n"
        "get_user --id 1 | jq .uid\n",
        sandbox_image=image, specs=specs, on_call=seen.append, client=docker_client,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    first, uid = result.stdout.splitlines()
    assert first == "12"
    assert FIRST_UID <= int(uid) <= LAST_UID  # the tools ran as the sandbox's own uid
    assert [(c.name, c.args, c.exit_status) for c in result.calls] == [
        ("get_user", {"id": 7}, 0),
        ("list_orders", {"user_id": 7}, 0),
        ("get_user", {"id": 1}, 0),
    ]
    assert [c.seq for c in seen] == [1, 2, 3]


async def test_a_script_tool_is_a_builtin_that_runs_its_script_in_the_sandbox(
    sandbox, docker_client
):
    image, specs = sandbox
    result = await run_bash_in_sandbox(
        "calculate_rsi --symbol MSFT --period 20 | jq -r .period; calculate_rsi --symbol '' || echo no",
        sandbox_image=image, specs=specs, client=docker_client,
    )  # fmt: skip
    assert result.stdout == "20\nno\n"
    assert result.stderr == "calculate_rsi: script error: missing required parameter: symbol\n"


async def test_a_tools_own_secret_reaches_its_calls_alone_and_never_the_script(
    sandbox, docker_client
):
    image, specs = sandbox
    result = await run_bash_in_sandbox(
        'peek --name PEEK_TOKEN\nget_user --id 1 | jq -r .token\necho "[$PEEK_TOKEN]"\n',
        sandbox_image=image, specs=specs, client=docker_client,
        secrets={"PEEK_TOKEN": "tok-1"}, tool_secrets={"peek": ["PEEK_TOKEN"]},
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "tok-1\nnull\n[]\n"


async def test_help_works_inside_the_sandbox(sandbox, docker_client):
    image, specs = sandbox
    result = await run_bash_in_sandbox("help --list | cut -d' ' -f1", sandbox_image=image,
                                       specs=specs, client=docker_client)  # fmt: skip
    assert result.stdout.split() == ["calculate_rsi", "get_user", "list_orders", "peek", "stall"]


async def test_a_builtin_that_never_returns_is_killed_with_the_container(sandbox, docker_client):
    image, specs = sandbox
    result = await run_bash_in_sandbox(
        "stall", sandbox_image=image, specs=specs, client=docker_client,
        bash_limits=BashLimits(timeout_seconds=1), limits=RunLimits(timeout_seconds=1),
    )  # fmt: skip
    assert result.exit_code == 124 and "timed out after 1 s" in result.stderr


async def test_the_bash_image_is_built_once_per_sandbox_image(sandbox, docker_client):
    image, _ = sandbox
    assert ensure_bash_image(image, client=docker_client) == ensure_bash_image(
        image, client=docker_client
    )


async def test_a_builtin_outside_the_allowed_tools_exits_non_zero_and_never_runs(
    sandbox, docker_client
):
    image, specs = sandbox
    result = await run_bash_in_sandbox(
        "get_user --id 7 | jq -r .name\n"
        "list_orders --user_id 7 || echo \"refused with $?\"\n"
        "eval 'list_orders --user_id 8' || echo again\n",
        sandbox_image=image, specs=specs, client=docker_client,
        allowed_tools=frozenset({"get_user"}),
    )  # fmt: skip
    assert result.stdout == "Ada\nrefused with 1\nagain\n", result.stderr
    assert "list_orders: Tool 'list_orders' is not allowed in this run" in result.stderr
    refused = [c for c in result.calls if c.refused]
    assert [c.name for c in refused] == ["list_orders", "list_orders"]
    assert all(c.exit_status == 1 for c in refused)
    assert not any(c.refused for c in result.calls if c.name == "get_user")


async def test_a_script_tool_builtin_is_refused_the_same_way(sandbox, docker_client):
    image, specs = sandbox
    result = await run_bash_in_sandbox(
        "calculate_rsi --symbol MSFT --period 20 || echo refused\n", sandbox_image=image,
        specs=specs, client=docker_client,
        allowed_tools=frozenset(),
    )  # fmt: skip
    assert result.stdout == "refused\n"
    assert [(c.name, c.refused) for c in result.calls] == [("calculate_rsi", True)]


def test_pruning_a_sandbox_image_removes_the_bash_image_built_on_it(
    docker_client, base_image, tmp_path
):
    name = f"prune-{uuid.uuid4().hex[:8]}"

    def built(greeting: str) -> tuple[SandboxBuilder, str]:
        registry = ToolRegistry()
        registry.register_sandbox(SandboxConfig(name=name))
        source = f"def greet() -> ToolResponse:\n    return ToolResponse(success=True, data={greeting!r})\n"
        registry.register_source(source, sandbox=name, description="Greet.")
        builder = SandboxBuilder(registry, client=docker_client, cache_dir=tmp_path)
        return builder, builder.ensure_image(name).tag

    def tags() -> set[str]:
        return {tag for image in docker_client.images.list() for tag in image.tags}

    old = current = ""
    try:
        _, old = built("hi")
        old_bash = ensure_bash_image(old, client=docker_client)
        builder, current = built("hello")  # a change of code: a new image
        current_bash = ensure_bash_image(current, client=docker_client)
        assert {old, old_bash, current, current_bash} <= tags()
        # The engine refuses to remove an image another was built on: the bash image goes first.
        assert builder.prune(name, keep=1) == 2
        assert {current, current_bash} <= tags() and not {old, old_bash} & tags()
        assert builder.prune(name, keep=1) == 0  # nothing left to remove, twice
    finally:
        for tag in (old, current):
            for image in docker_client.images.list(
                filters={"label": f"{DERIVED_FROM_LABEL}={tag}"}
            ):
                docker_client.images.remove(image.id, force=True)
        for image in docker_client.images.list(name=f"jazzmine/sandbox-{name}"):
            docker_client.images.remove(image.id, force=True)


def test_bash_images_made_before_labels_are_removed_unless_a_container_uses_one(
    sandbox, docker_client
):
    # What an older release left: bash images of their own that name no sandbox image, which
    # pruning a sandbox image therefore never reaches. Made here by committing a container.
    image, _specs = sandbox
    legacy = f"jazzmine/bash:legacy-{uuid.uuid4().hex[:12]}"
    in_use = f"jazzmine/bash:legacy-{uuid.uuid4().hex[:12]}"
    source = docker_client.containers.create(image, command=["true"])
    try:
        for tag in (legacy, in_use):
            repository, name = tag.split(":")
            source.commit(repository=repository, tag=name)
    finally:
        source.remove(force=True)
    holder = docker_client.containers.create(in_use, command=["true"])
    try:
        assert DERIVED_FROM_LABEL not in (docker_client.images.get(legacy).labels or {})
        removed = legacy_bash_images_remove(docker_client)
        tags = {t for i in docker_client.images.list() for t in i.tags}
        assert legacy not in tags and removed >= 1
        assert in_use in tags  # a container uses it
        assert image in tags  # the image it was a tag of stays, with its own name
        assert ensure_bash_image(image, client=docker_client) in tags  # labelled: kept
        assert legacy_bash_images_remove(docker_client) == 0  # twice: nothing more to do
    finally:
        holder.remove(force=True)
        for tag in (legacy, in_use):
            with contextlib.suppress(docker.errors.ImageNotFound):
                docker_client.images.remove(tag)


def test_a_bash_image_is_built_on_the_image_its_caller_read_even_if_the_tag_moved(
    docker_client, base_image, tmp_path
):
    """The run's wheels are checked on the image its tag named; the bash image is built on it.

    Built `FROM` the tag, it was built on whatever the tag named by then: an image removed
    and made again in between (other files from the index) ran with the secrets the check
    let through for the first one.
    """
    name = f"moved-{uuid.uuid4().hex[:8]}"

    def built(greeting: str) -> str:
        registry = ToolRegistry()
        registry.register_sandbox(SandboxConfig(name=name))
        source = f"def greet() -> ToolResponse:\n    return ToolResponse(success=True, data={greeting!r})\n"
        registry.register_source(source, sandbox=name, description="Greet.")
        builder = SandboxBuilder(registry, client=docker_client, cache_dir=tmp_path)
        return builder.ensure_image(name).tag

    def layers(image: str) -> list[str]:
        return docker_client.api.inspect_image(image)["RootFS"]["Layers"]

    tag = other = ""
    try:
        tag, other = built("checked"), built("made since")
        checked = docker_client.images.get(tag).id
        docker_client.api.tag(other, *tag.rsplit(":", 1), force=True)  # the tag moves
        pinned = ensure_bash_image(tag, client=docker_client, image_id=checked)
        assert layers(pinned)[: len(layers(checked))] == layers(checked)
        assert layers(pinned)[: len(layers(other))] != layers(other)
        now = ensure_bash_image(tag, client=docker_client)  # no id read: what the tag names
        assert now != pinned and layers(now)[: len(layers(other))] == layers(other)
    finally:
        for image in docker_client.images.list(filters={"label": f"{DERIVED_FROM_LABEL}={tag}"}):
            docker_client.images.remove(image.id, force=True)
        for image in docker_client.images.list(name=f"jazzmine/sandbox-{name}"):
            docker_client.images.remove(image.id, force=True)
