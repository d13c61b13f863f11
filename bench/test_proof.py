"""Fast versions of the proof benches: load with hostile clients, GGUF and Hugging Face
fuzzing, kill -9.

The full runs are `bench/load.py`, `bench/fuzz_gguf.py`, `bench/fuzz_hf.py`,
`bench/durability.py`, `bench/portability.py` and `bench/sources.py`; these use the same
code with fewer clients, cases, writes, templates and tokens (about 70 s in all). They live
beside the benches they test, so that the tests under `tests/` never import a bench (both
import what they share from `tests.support`). Those that read GGUF vocabularies or
templates skip without the shared folder (`../shared`).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys

import pytest

from app.analysis.examples import EXAMPLES
from app.render.engines import ENGINES
from app.web.factory import create_app
from bench import (
    _fuzz,
    _hf_seeds,
    attack,
    durability,
    fuzz_gguf,
    fuzz_hf,
    load,
    portability,
    sources,
)
from bench._server import Server
from tests.support import REPO as ROOT
from tests.support import UNLIMITED_WRITES
from tests.support.shared_data import needs_shared
from tests.support.sources import built


@pytest.fixture()
def fuzz_app(tmp_path):
    """An application of its own, so fuzzed sources stay out of the session's data."""
    application = create_app({"TESTING": True, "DATA_DIR": str(tmp_path), **UNLIMITED_WRITES})
    yield application
    application.extensions["sandbox_pool"].close()


def _server(**env: str) -> Server:
    """gunicorn in its own process group, with a temporary data folder."""
    server = Server({f"PLAYGROUND_{key}": value for key, value in env.items()})
    try:
        server.start()
    except BaseException:
        _close(server)
        raise
    return server


def _close(server: Server) -> None:
    server.close()
    shutil.rmtree(server.data_dir, ignore_errors=True)


# --------------------------------------------------------------------------- load


@pytest.mark.timing
@needs_shared
def test_load_with_hostile_clients_has_no_errors():
    # Every client here, normal and hostile, comes from one address: the slot kept for
    # known clients (a per-address rule) would only take a quarter of the slots away from
    # all of them at once, so it is lifted (KNOWN_SLOTS=0), as the other per-client rules.
    server = _server(WORKERS="2", THREADS="4", CPU_SECONDS="1", KNOWN_SLOTS="0")
    try:
        workers = server.worker_pids()
        workload = load.build_workload(server)
        load.run_phase(server, workload, "warm-up", 2.0, clients=8)
        calm = load.run_phase(server, workload, "calm", 3.0, clients=8)
        stormy = load.run_phase(server, workload, "stormy", 3.0, clients=8, hostile_clients=2)
        load.report_phase(calm)
        load.report_phase(stormy)
        load.report_ratio(calm, stormy)  # printed, not asserted: timing depends on the machine
        for phase in (calm, stormy):
            assert phase.normal.total_errors == 0, phase.normal.samples
            for kind in load.KINDS:
                assert phase.normal.latencies[kind], f"no {kind} request in {phase.name}"
        assert stormy.hostile.total_errors == 0, stormy.hostile.samples
        assert sum(len(v) for v in stormy.hostile.latencies.values()) > 0
        assert server.worker_pids() == workers
        assert not server.worker_trouble()
    finally:
        _close(server)


@pytest.mark.timing
@needs_shared
def test_attackers_cycling_through_every_finding_leave_normal_clients_unharmed(tmp_path):
    server = Server(attack.server_env(workers=2, threads=4, clients=8 + 6))
    try:
        server.start()
        result = attack.attack_run(
            server, tmp_path, clients=8, attackers=6, seconds=6.0, warmup=1.0
        )
        load.report_phase(result.calm)
        load.report_phase(result.stormy)
        ratio = load.report_ratio(result.calm, result.stormy)  # printed: machine-dependent
        assert attack.report(server, result, ratio) == 0, result.stormy.hostile.samples
        attacks = {name for name, *_ in attack.ATTACKS}
        tried = set(result.stormy.hostile.latencies)
        assert len(tried & attacks) >= 6, tried
        assert not server.worker_trouble()
    finally:
        _close(server)


# --------------------------------------------------------------------------- fuzz


@needs_shared
def test_fuzzed_gguf_headers_in_process(fuzz_app):
    result = fuzz_gguf.fuzzer().in_process(fuzz_app.test_client(), 500)
    _fuzz.report(result, None, 0)
    assert result.sent == 500
    assert result.failed == 0, result.failures
    # The mutations reach every outcome, including sources that load and tokenize.
    assert {200, 409, 422} <= set(result.statuses)
    assert result.tokenize[200] > 0


@needs_shared
def test_fuzzed_gguf_headers_through_gunicorn():
    server = _server(WORKERS="2", THREADS="2", HEAVY_SLOTS="2")
    try:
        # Cases 500..599: others than the in-process test's.
        result, health = fuzz_gguf.fuzzer().with_health(server, 100, clients=4, start=500)
        _fuzz.report(result, health, 512 * 2**20)
        assert result.failed == 0, result.failures
        assert health.workers_unchanged, (health.workers_before, health.workers_after)
        assert not health.trouble, server.tail()
        assert health.rss.growth < 512 * 2**20
    finally:
        _close(server)


@needs_shared
def test_fuzz_cases_are_reproducible():
    assert fuzz_gguf.mutate(1234) == fuzz_gguf.mutate(1234)
    assert fuzz_gguf.mutate(1234) != fuzz_gguf.mutate(1235)


# Found by bench/fuzz_gguf.py (cases 3213 and 8616 of seed 0): a WordPiece vocabulary
# whose unknown token is typed NORMAL loaded as supported, then tokenizing answered 500.
@needs_shared
def test_wordpiece_vocabulary_with_a_normal_unknown_token_is_not_a_500(fuzz_app):
    shrunk = f"ggml-vocab-bert-bge.gguf[:{fuzz_gguf.SHRUNK_ITEMS}]"
    data = bytearray(next(s for s in fuzz_gguf.load_seeds() if s.name == shrunk).data)
    # tokenizer.ggml.token_type: an array (9) of int32 (5); set [UNK]'s (id 100) type to 1.
    key = b"tokenizer.ggml.token_type" + struct.pack("<II", 9, 5)
    items = data.index(key) + len(key) + 8
    struct.pack_into("<i", data, items + 4 * 100, 1)
    client = fuzz_app.test_client()
    loaded = client.post(
        "/api/sources/gguf", data=bytes(data), content_type="application/octet-stream"
    )
    assert loaded.status_code == 200
    # Words outside the vocabulary need the unknown token.
    body = json.dumps({"source": loaded.json["id"], "text": "hello wörld 你好"})
    answer = client.post("/api/tokenize", data=body, content_type="application/json")
    assert answer.status_code == 200, answer.get_data()
    assert 100 in [t["id"] for t in answer.json["tokens"]], "unknown words map to [UNK]"


# --------------------------------------------------------------------------- fuzz HF

#: The model each tokenizer.json seed is built with.
SEED_MODELS = {
    "gpt2-bpe": "BPE",
    "llama3-bpe": "BPE",
    "llama2-spm-bpe": "BPE",
    "bert-wordpiece": "WordPiece",
    "t5-unigram": "Unigram",
    "word-level": "WordLevel",
}


def _upload_hf(client, files: dict[str, str]):
    data = {f"file{i}": (io.BytesIO(t.encode()), n) for i, (n, t) in enumerate(files.items())}
    return client.post("/api/sources/hf", data=data, content_type="multipart/form-data")


@pytest.mark.parametrize("name", sorted(SEED_MODELS))
def test_hf_fuzz_seeds_load_and_tokenize(fuzz_app, name):
    client = fuzz_app.test_client()
    config = _hf_seeds.config_seeds()["llama2-config"]
    files = {
        "tokenizer.json": _hf_seeds.tokenizer_seeds()[name],
        "tokenizer_config.json": json.dumps(config),
    }
    loaded = _upload_hf(client, files)
    assert loaded.status_code == 200, loaded.get_data()
    tokenizer = built(client, loaded.json)["tokenizer"]
    assert (tokenizer["model"], tokenizer["supported"]) == (SEED_MODELS[name], True)
    assert set(loaded.json["templates"]) == {"default", "tool_use"}
    assert loaded.json["special_tokens"]["bos_token"] == "<s>"
    body = {"source": loaded.json["id"], "text": fuzz_hf.PROBE_TEXT}
    answer = client.post("/api/tokenize", json=body)
    assert answer.status_code == 200, answer.get_data()
    assert answer.json["count"] > 5


def test_hf_fuzz_seed_with_byte_fallback_spells_an_emoji_in_bytes(fuzz_app):
    """The Llama 2-like seed is SentencePiece-like: an unknown character falls back to
    byte tokens, each spanning the character."""
    client = fuzz_app.test_client()
    loaded = _upload_hf(client, {"tokenizer.json": _hf_seeds.tokenizer_seeds()["llama2-spm-bpe"]})
    body = {"source": loaded.json["id"], "text": "😀"}  # not in the training text
    tokens = client.post("/api/tokenize", json=body).json["tokens"]
    emoji = [t for t in tokens if t["piece"].startswith("<0x")]
    assert [t["piece"] for t in emoji] == [f"<0x{b:02X}>" for b in "😀".encode()]
    assert {(t["start"], t["end"]) for t in emoji} == {(0, 1)}


def test_fuzzed_hf_files_through_gunicorn():
    # Fuzzing checks answers to inputs: no heavy-client rule (see bench/_fuzz.FUZZ_SETTINGS).
    server = _server(WORKERS="2", THREADS="2", SOURCE_MEMORY_MB="256", HEAVY_SLOTS="2")
    try:
        result, health = fuzz_hf.fuzzer().with_health(server, 200, clients=4, start=1000)
        budget = fuzz_hf.memory_budget_mb(workers=2, source_memory_mb=256) * 2**20
        _fuzz.report(result, health, budget)
        assert result.failed == 0, result.failures
        assert health.workers_unchanged, (health.workers_before, health.workers_after)
        assert not health.trouble, server.tail()
        assert health.rss.growth < budget
        # Every outcome is reached: sources that load and tokenize, files refused by name,
        # backtracking regexes stopped, limits hit.
        assert {200, 400, 413, 422} <= set(result.statuses)
        assert result.tokenize_by_mutation["seed"][200] > 0
        assert result.tokenize_by_mutation["regex"][422] > 0
        assert any("source_memory_mb" in outcome for outcome in result.outcomes)
    finally:
        _close(server)


#: Prints the SHA-256 of cases 0..59 of the HF fuzzer, as another process makes them.
HF_CASES_DIGEST = (
    "import hashlib; from bench.fuzz_hf import mutate; "
    "print(hashlib.sha256(b''.join(mutate(i).body for i in range(60))).hexdigest())"
)


def test_hf_fuzz_cases_are_reproducible():
    assert fuzz_hf.mutate(1234) == fuzz_hf.mutate(1234)
    assert fuzz_hf.mutate(1234).body != fuzz_hf.mutate(1235).body
    # The same in another process (its own hash seed): the seeds are trained in each.
    here = hashlib.sha256(b"".join(fuzz_hf.mutate(i).body for i in range(60))).hexdigest()
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    there = subprocess.run(
        [sys.executable, "-c", HF_CASES_DIGEST],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=120,
    ).stdout.strip()  # fmt: skip
    assert here == there


# --------------------------------------------------------------------------- sources


@pytest.mark.timing
def test_sources_answer_at_parse_speed_and_tokenize_near_the_library():
    """`bench/sources.py --small`: ratios to the libraries measured in the same run.

    The goals are tight (2x, 1.5x) and this machine's timings spread by half from one run
    to the next (compact tokenize / encode: 1.6x to 1.9x alone, 2.3x once in CI); these
    bounds leave that room and still fail on what the goals are about: an answer that
    waits for the tokenizer takes ten times the header parse (150k tokens), and an object
    per token three to four times the encode."""
    figures = sources.run(small=True)
    sources.report(figures)
    ratios = figures.ratios
    assert ratios["gguf answer / header parse"] <= 4.0  # goal 2.0
    for kind in ("gguf", "hf"):
        # The compact answer beats an object per token whatever the machine's load.
        compact, default = (ratios[f"{kind} tokenize {f} / encode"] for f in ("compact", "default"))
        assert compact < default
    assert ratios["gguf tokenize compact / encode"] <= 2.5  # goal 1.5
    assert ratios["replica ready / first ready"] <= 2.0  # goal 1.0; building twice is 2x


# --------------------------------------------------------------------------- durability


@needs_shared
def test_acknowledged_shares_survive_kill_9_of_the_whole_server():
    result = durability.run_durability(writes=300, clients=4, kill_fraction=0.5)
    durability.report(result)
    assert not result.burst.errors, result.burst.errors
    assert len(result.burst.acknowledged) >= 150
    assert result.burst.killed_with_left > 0, "the kill came after the burst, not during it"
    assert not result.check.lost, result.check.lost
    assert not result.check.different, result.check.different
    assert result.check.verified == len(result.burst.acknowledged)
    assert result.check.write_after_restart in (200, 201)
    assert result.integrity == "ok"


def test_portability_matrix_counts_each_template_by_its_worst_case(tmp_path):
    # ChatML renders the same everywhere; `date_string` is a variable only llama-server
    # defines, so that template differs on every conversation with llama.cpp.
    turns = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
    turns += "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    (tmp_path / "chatml.jinja").write_text(turns)
    (tmp_path / "dated.jinja").write_text("{{ date_string }}" + turns)
    rows, by_case = portability.matrix(sorted(tmp_path.glob("*.jinja")))
    assert rows["chatml.jinja"]["llama.cpp"] == "identical"
    assert rows["dated.jinja"]["llama.cpp"] == "differs"
    conversations = 1 + len(EXAMPLES)
    assert by_case.total() == conversations * 2 * (len(ENGINES) - 1)


# --------------------------------------------------------------------------- check


@needs_shared
def test_the_check_bench_times_templates_and_engines():
    done = subprocess.run(
        [sys.executable, "-m", "bench.check", "--limit", "2"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [
        line for line in done.stdout.splitlines() if line.endswith(".jinja") or ".jinja " in line
    ]
    assert len(lines) == 2 and all(f" {engine} " in lines[0] for engine in ENGINES)
    assert "crashed: none; over 60 s: none" in done.stdout
