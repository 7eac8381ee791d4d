"""The fake LLM server: control endpoint, default script policy, and running it for demos."""

from __future__ import annotations

import subprocess
import sys

import httpx

from jazzmine.core.tools import ScriptGenerator
from jazzmine.llm import LLMConfig, complete
from jazzmine.llm.fake.policy import script_policy
from jazzmine.llm.fake.server import DEFAULT_MODEL, FakeLLMServer, Reply
from jazzmine.llm.fake_server import serving_in_thread
from tests.waiting import wait_until

from .conftest import loopback_config

TASK = "Show the first order of user 7"


async def test_replies_can_be_queued_over_http(server: FakeLLMServer, config: LLMConfig) -> None:
    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.post(
            f"http://127.0.0.1:{server.port}/_script",
            json={"replies": ["from the queue", {"status": 503, "message": "down"}]},
        )
    assert answer.json() == {"queued": 2}
    assert (await complete(config, [{"role": "user", "content": "x"}])).text == "from the queue"
    assert server.replies[0] == Reply(status=503, message="down")


async def test_the_control_endpoint_refuses_unknown_fields(server: FakeLLMServer) -> None:
    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.post(
            f"http://127.0.0.1:{server.port}/_script", json={"replies": [{"txt": "typo"}]}
        )
    assert answer.status_code == 400
    assert "txt" in answer.json()["error"]["message"]


async def test_received_requests_are_listed_without_keys(server: FakeLLMServer) -> None:
    server.script("ok")
    config = loopback_config(server.base_url, api_key="k-123", model=DEFAULT_MODEL)
    await complete(config, [{"role": "user", "content": "hello"}])
    async with httpx.AsyncClient(trust_env=False) as client:
        listed = (await client.get(f"http://127.0.0.1:{server.port}/_requests")).json()
    assert listed[0]["body"]["messages"] == [{"role": "user", "content": "hello"}]
    assert listed[0]["had_key"] is True
    assert "k-123" not in str(listed)


async def test_an_unknown_path_is_not_found(server: FakeLLMServer) -> None:
    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.get(f"http://127.0.0.1:{server.port}/v2/nothing")
    assert answer.status_code == 404


def test_the_policy_writes_a_valid_script_for_the_tools_it_sees(
    generator: ScriptGenerator,
) -> None:
    prompt = generator.build_prompt("List the orders of user 7", "shop")
    body = script_policy([{"role": "user", "content": prompt}])
    assert 'get_orders(user_id="7")' in body
    assert "r.data[0]" not in body
    assert generator.validate(generator.assemble_script(body, "shop"), "shop") == []


def test_the_policy_makes_the_key_error_mistake_first_and_fixes_it_on_retry(
    generator: ScriptGenerator,
) -> None:
    first = script_policy([{"role": "user", "content": generator.build_prompt(TASK, "shop")}])
    assert "r.data[0]" in first
    retry_prompt = generator.build_prompt(TASK, "shop", first, "KeyError: 0", attempt=2)
    fixed = script_policy([{"role": "user", "content": retry_prompt}])
    assert "r.data[0]" not in fixed
    assert ".values()" in fixed
    for body in (first, fixed):
        assert generator.validate(generator.assemble_script(body, "shop"), "shop") == []


def test_the_policy_can_wrap_its_script_in_fences_like_chatty_models(
    generator: ScriptGenerator,
) -> None:
    prompt = generator.build_prompt(TASK, "shop")
    body = script_policy([{"role": "user", "content": prompt}], fences=True)
    assert body.startswith("```python\n") and body.rstrip().endswith("```")


def test_the_policy_copes_with_a_sandbox_without_tools() -> None:
    body = script_policy([{"role": "user", "content": "Task:\nanything\n"}])
    assert "emit_result" in body


def test_a_synchronous_caller_can_run_it_in_a_thread() -> None:
    with serving_in_thread(FakeLLMServer(["threaded"])) as server:
        answer = httpx.post(
            f"{server.base_url}/chat/completions",
            json={"model": DEFAULT_MODEL, "messages": [{"role": "user", "content": "x"}]},
            trust_env=False,
        )
    assert answer.json()["choices"][0]["message"]["content"] == "threaded"


def test_it_runs_as_a_module_on_the_given_port(closed_port: int) -> None:
    command = [sys.executable, "-m", "jazzmine.llm.fake_server", "--port", str(closed_port)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            banner = process.stdout.readline()
            assert f"http://127.0.0.1:{closed_port}/v1" in banner

            def models_listed() -> dict | None:
                url = f"http://127.0.0.1:{closed_port}/v1/models"
                try:
                    return httpx.get(url, trust_env=False).json()
                except httpx.ConnectError:
                    return None

            models = wait_until(
                models_listed, timeout=10, interval=0.05, message="the fake server did not start"
            )
            assert models["data"][0]["id"] == DEFAULT_MODEL
        finally:
            process.terminate()


def test_a_bash_prompt_gets_a_bash_script_that_calls_the_tools_the_task_names() -> None:
    from jazzmine.bash.engine import BashSession, ToolSpec
    from jazzmine.bash.generator import BashScriptGenerator
    from jazzmine.language import written_in_other_language

    orders = {
        "type": "object",
        "properties": {
            "user_id": {"type": "string"},
            "limit": {"type": "integer", "default": 5},
            "dry_run": {"type": "boolean"},
        },
        "required": ["user_id"],
    }
    specs = [
        ToolSpec(name="get_orders", description="A user's orders.", schema=orders),
        ToolSpec(name="get_weather", description="The weather.", schema={"type": "object"}),
    ]
    generator = BashScriptGenerator(specs)
    prompt = generator.build_prompt("List the orders of user 7", "shop")
    body = script_policy([{"role": "user", "content": prompt}])
    assert written_in_other_language(body, "bash") is None
    assert generator.validate(generator.assemble_script(body, "shop"), "shop") == []
    calls: list[dict] = []
    session = BashSession(specs, {"get_orders": lambda **kw: calls.append(kw) or {"n": 1}})
    result = session.run(body)
    assert result.exit_code == 0, result.stderr
    assert calls == [{"user_id": "7", "limit": 7}]  # the task's number; no switch set unasked
    fenced = script_policy([{"role": "user", "content": prompt}], fences=True)
    assert fenced.startswith("```bash\n")
