"""The transformers.js engine under the sandbox's limits: a hostile template gets the same
clear 422 as in the Python engines, and the next render works (the Node child and the
sandbox worker are replaced, never left hanging)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace

import pytest

from app.problems import TemplateProblem
from app.render.core import RenderRequest
from app.render.engines.transformersjs.node import (
    NodeRenderer,
    NodeUnavailable,
    node_renderer,
)
from app.render.limits import RenderLimits
from app.render.pool import SandboxPool
from app.web.factory import create_app
from tests.support import REPO, UNLIMITED_WRITES

HELLO = [{"role": "user", "content": "Hi"}]
ECHO = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"

#: Templates that each run into one limit, under the small application's settings.
BOMBS = {
    "cpu_seconds": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
    "{% endfor %}",
    "output_chars": "{% for i in range(1000) %}" + "x" * 100 + "{% endfor %}",
    # 2**27 characters, cheap while they are a rope of joins; upper() needs them in one piece.
    "memory": "{% set ns = namespace(s='x') %}{% for i in range(27) %}{% set ns.s = ns.s ~ ns.s %}"
    "{% endfor %}{{ ns.s.upper() | length }}",
    "recursion": "{{ " + "(" * 50000 + "1" + ")" * 50000 + " }}",
    "template_bytes": "{#" + "x" * 300 * 1024 + "#}",
}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """One sandbox worker with two seconds of CPU, 128 MiB and 10,000 characters (the
    memory bomb needs a good part of a second to build its text, more on a busy machine,
    and must reach the heap's end before the clock's)."""
    config = {
        "TESTING": True,
        "DATA_DIR": str(tmp_path_factory.mktemp("small")),
        "CPU_SECONDS": 2.0,
        "MEMORY_MB": 128,
        "OUTPUT_CHARS": 10_000,
        "THREADS": 1,
    }
    application = create_app({**config, **UNLIMITED_WRITES})
    yield application.test_client()
    application.extensions["sandbox_pool"].close()


def _render(client, template: str):
    body = {"template": template, "messages": HELLO, "engine": "transformers.js"}
    return client.post("/api/render", json=body)


@pytest.mark.parametrize("limit", BOMBS)
def test_a_hostile_template_hits_its_limit_and_the_next_render_works(small, limit):
    refused = _render(small, BOMBS[limit])
    assert refused.status_code == 422, refused.json
    assert refused.json["error"]["type"] == "LimitExceeded"
    assert refused.json["error"]["limit"] == limit
    answered = _render(small, ECHO)
    assert answered.status_code == 200
    assert answered.json["prompt"] == "<user>Hi"


def test_the_cpu_limit_kills_the_node_child_and_a_new_one_renders():
    renderer = NodeRenderer(RenderLimits(cpu_seconds=0.3))
    assert renderer.render(ECHO, {"messages": HELLO}, None) == "<user>Hi"
    first = renderer._running().pid
    with pytest.raises(TemplateProblem) as stopped:
        renderer.render(BOMBS["cpu_seconds"], {"messages": HELLO}, None)
    assert stopped.value.limit == "cpu_seconds"
    assert not os.path.exists(f"/proc/{first}"), "the busy Node child is still there"
    assert renderer.render(ECHO, {"messages": HELLO}, None) == "<user>Hi"
    assert renderer._running().pid != first
    renderer.stop()


def _soft_cpu_limit(pid: int) -> int:
    with open(f"/proc/{pid}/limits") as limits:
        line = next(line for line in limits if line.startswith("Max cpu time"))
    return int(line.split()[3])


def test_each_render_arms_the_child_s_own_kernel_cpu_limit():
    """The child is long-lived: a CPU limit inherited from the worker's task, or armed once,
    would kill it after a few renders' worth of CPU time."""
    renderer = NodeRenderer(RenderLimits(cpu_seconds=2.0))
    renderer.render(ECHO, {"messages": HELLO}, None)
    child = renderer._running().pid
    with open(f"/proc/{child}/stat", "rb") as stat:
        fields = stat.read().rpartition(b")")[2].split()
    used = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    # Armed before the render: the child's CPU time then, plus 2 s, plus 1 s of grace.
    assert used + 2 <= _soft_cpu_limit(child) <= used + 4
    renderer.stop()


def test_the_node_heap_is_the_memory_allowance():
    """A text of 64 Mi characters fits in 256 MiB of heap and not in 64 MiB."""
    template = BOMBS["memory"].replace("range(27)", "range(26)")
    roomy = NodeRenderer(RenderLimits(memory_bytes=256 * 1024 * 1024))
    assert roomy.render(template, {"messages": []}, None) == str(2**26)
    roomy.stop()
    tight = NodeRenderer(RenderLimits(memory_bytes=64 * 1024 * 1024))
    with pytest.raises(TemplateProblem) as refused:
        tight.render(template, {"messages": []}, None)
    assert refused.value.limit == "memory"
    tight.stop()


def test_a_render_that_filled_the_heap_leaves_the_next_one_its_whole_allowance():
    """64 Mi characters and their upper-case copy fill 128 MiB of heap: that render may
    succeed or hit `memory`, but the next one, a tiny one, must not pay for it (V8 marks
    what was live when a collection began, so a later collection can die of that garbage)."""
    template = BOMBS["memory"].replace("range(27)", "range(26)")
    renderer = NodeRenderer(RenderLimits(memory_bytes=128 * 1024 * 1024))
    try:
        for _ in range(3):
            with contextlib.suppress(TemplateProblem):
                renderer.render(template, {"messages": []}, None)
            assert renderer.render(ECHO, {"messages": HELLO}, None) == "<user>Hi"
    finally:
        renderer.stop()


def test_a_template_error_is_a_422_with_the_library_s_message(client):
    body = {"template": "{{ raise_exception('No system role') }}", "messages": HELLO}
    refused = client.post("/api/render", json={**body, "engine": "transformers.js"})
    assert refused.status_code == 422
    assert refused.json["error"]["message"] == "No system role"
    assert refused.json["error"]["limit"] is None


def test_node_cpu_time_counts_as_the_task_s_own():
    """The heavy-client rule reads each task's CPU time: a Node bomb must count in full."""
    spent: list[float] = []
    pool = SandboxPool(RenderLimits(cpu_seconds=0.5), workers=1, on_cpu=spent.append)
    request = RenderRequest(template=ECHO, messages=HELLO, engine="transformers.js")
    try:
        pool.render(request)
        with pytest.raises(TemplateProblem):
            pool.render(replace(request, template=BOMBS["cpu_seconds"]))
    finally:
        pool.close()
    assert spent[-1] >= 0.5


@pytest.mark.parametrize(
    "template",
    [
        '{{ "".constructor }}',
        "{{ raise_exception.constructor }}",
        '{{ messages[0].constructor.constructor("return process")() }}',
        '{{ strftime_now.constructor("return process")() }}',
    ],
)
def test_javascript_internals_are_out_of_reach(client, template):
    """@huggingface/jinja reads only its own values: no JavaScript property or function."""
    body = {"template": template, "messages": HELLO, "engine": "transformers.js"}
    answer = client.post("/api/render", json=body)
    if answer.status_code == 200:
        assert answer.json["prompt"] == ""
    else:
        assert answer.status_code == 422
        assert "not a function" in answer.json["error"]["message"]


def test_text_that_is_not_valid_unicode_crosses_as_sent(client):
    """A lone surrogate (JSON allows "\\ud800") reaches the template and comes back."""
    body = {"template": ECHO, "messages": [{"role": "user", "content": "a\ud800b"}]}
    answer = client.post("/api/render", json={**body, "engine": "transformers.js"})
    assert answer.status_code == 200
    assert answer.json["prompt"] == "<user>a\ud800b"


def test_without_node_the_render_says_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    renderer = NodeRenderer(RenderLimits())
    with pytest.raises(NodeUnavailable, match=r"Node\.js is not installed"):
        renderer.render(ECHO, {"messages": HELLO}, None)


def node_child_pid(limits: RenderLimits) -> int:
    """(In a sandbox worker) render once and name the worker's Node child."""
    renderer = node_renderer(limits)
    renderer.render(ECHO, {"messages": HELLO}, None)
    return renderer._running().pid


def test_the_node_child_lives_as_long_as_its_worker():
    pool = SandboxPool(RenderLimits(), workers=1)
    try:
        first = pool.run(node_child_pid)
        assert pool.run(node_child_pid) == first, "a new Node process for every render"
    finally:
        pool.close()
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{first}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{first}"), "the Node child outlived its worker"


def _nice(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return int(stat.read().rpartition(b")")[2].split()[16])


def test_a_long_render_drops_the_node_child_to_the_lowest_priority():
    """As the guard demotes a worker whose task runs long: the CPU is the child's here."""
    renderer = NodeRenderer(RenderLimits(cpu_seconds=10))
    renderer.render(ECHO, {"messages": HELLO}, None)
    child = renderer._running().pid
    assert _nice(child) < 19
    renderer.render("{% for i in range(200000) %}{% endfor %}", {"messages": HELLO}, None)
    assert _nice(child) == 19
    renderer.stop()


@pytest.mark.skipif(os.geteuid() != 0, reason="coming back to nice 5 needs CAP_SYS_NICE here")
def test_the_node_child_renders_at_its_task_s_priority():
    """The child lives as long as its worker, across tasks: a task for a client that is
    not known runs at the lowest priority, and so does the child while it renders for
    it; a known client's next render finds the child back at the worker's priority."""
    renderer = NodeRenderer(RenderLimits(cpu_seconds=10))
    try:
        renderer.render(ECHO, {"messages": HELLO}, None)
        child = renderer._running().pid
        worker = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, 0, 19)  # as the guard starts such a task
        renderer.render(ECHO, {"messages": HELLO}, None)
        assert _nice(child) == 19
        os.setpriority(os.PRIO_PROCESS, 0, worker)  # the worker back at its own
        renderer.render(ECHO, {"messages": HELLO}, None)
        assert _nice(child) == worker
    finally:
        os.setpriority(os.PRIO_PROCESS, 0, 0)
        renderer.stop()


#: A process that starts a Node child, sets it looping and dies without a word.
ABANDONING_PARENT = """
import json, os, signal
from app.render.engines.transformersjs.node import NodeRenderer
from app.render.limits import RenderLimits
child = NodeRenderer(RenderLimits(cpu_seconds=60))._running()
request = {"template": TEMPLATE, "context": {}, "max_chars": 10, "now": None}
child.stdin.write(json.dumps(request).encode() + b"\\n")
child.stdin.flush()
print(child.pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_busy_node_child_dies_with_a_worker_that_is_killed():
    """A worker the pool kills cannot stop its child; the kernel does (PR_SET_PDEATHSIG)."""
    script = ABANDONING_PARENT.replace("TEMPLATE", repr(BOMBS["cpu_seconds"]))
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    child = int(done.stdout.split()[0])
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{child}") and time.monotonic() < deadline:
        time.sleep(0.05)
    outlived = os.path.exists(f"/proc/{child}")
    if outlived:
        os.kill(child, signal.SIGKILL)  # leave no looping process behind a failed test
    assert not outlived, "a looping Node child outlived its worker"
