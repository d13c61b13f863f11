"""`./playground check`: what it finds in real templates, its outputs, its exit status."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from gguf import GGUFWriter
from junitparser import Failure, JUnitXml

from app.check.cli import main
from app.check.conversations import STANDARD
from app.check.run import ANALYSED
from app.check.target import read_target
from app.sources.limits import SourceLimits
from tests.support import REPO
from tests.support.fake_hub import FakeHub, Repo
from tests.support.remote_fixtures import transformers_repo
from tests.support.shared_data import TEMPLATES_DIR, VOCAB_DIR, needs_shared
from tests.support.sources import built_with

QWEN3 = REPO / "templates_lib" / "qwen3.jinja"
LLAMA31 = REPO / "templates_lib" / "llama3.1.jinja"


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    status = main([*args, "--format", "json"])
    return status, json.loads(capsys.readouterr().out)


def _ids(report: dict, severity: str) -> set[str]:
    return {f["id"] for f in report["findings"] if f["severity"] == severity}


def test_qwen3_fails_on_edge_llm_with_the_schema(capsys) -> None:
    status, report = _json(capsys, str(QWEN3))
    assert status == 1
    assert set(report) == {"target", "engines", "findings"}
    assert {"severity", "engine", "conversation", "message"} <= set(report["findings"][0])
    edge = next(row for row in report["engines"] if row["engine"] == "edge-llm")
    assert edge["loads"] is False
    assert _ids(report, "error") == {"load:edge-llm"}
    # vLLM's API refuses arguments as objects whatever the template: a note, not an error.
    assert "render:vllm:tool-round-objects" in _ids(report, "note")
    load = next(f for f in report["findings"] if f["id"] == "load:edge-llm")
    assert "reverse" in load["message"]  # inja's own words: no filter `reverse`


def test_an_accept_file_turns_the_failure_into_success(tmp_path: Path, capsys) -> None:
    template = tmp_path / "chat_template.jinja"
    template.write_text(QWEN3.read_text())
    assert main([str(template)]) == 1
    accept = '[[accept]]\nid = "load:edge-llm"\nreason = "known"\n'
    (tmp_path / ".playground-check.toml").write_text(accept)
    assert main([str(template), "--config", str(tmp_path / "none.toml")]) == 2
    capsys.readouterr()
    status, report = _json(capsys, str(template))
    assert status == 0
    assert {f["accepted"] for f in report["findings"] if f["severity"] == "error"} == {"known"}
    assert main([str(template), "--fail-on", "warning"]) == 1
    assert "accepted (known)" in capsys.readouterr().out


@needs_shared
def test_firefunction_v2_does_not_load_in_edge_llm(capsys) -> None:
    template = TEMPLATES_DIR / "fireworks-ai-llama-3-firefunction-v2.jinja"
    status, report = _json(capsys, str(template), "--engines", "edge-llm,llama.cpp")
    assert status == 1
    engines = [row["engine"] for row in report["engines"]]
    assert engines == ["transformers", "llama.cpp", "edge-llm"]
    assert "load:edge-llm" in _ids(report, "error")
    # transformers raises without a `functions` variable, where llama.cpp renders.
    assert "render:transformers:plain" in _ids(report, "error")
    said = {f["message"] for f in report["findings"] if f["id"] == "differs:llama.cpp:plain"}
    assert said == {"renders where transformers raises"}


def test_llama31_junit_is_read_by_a_junit_parser(tmp_path: Path) -> None:
    out = tmp_path / "check.xml"
    args = [str(LLAMA31), "--engines", "vllm", "--format", "junit", "--output", str(out)]
    status = main([*args, "--fail-on", "warning"])
    # junitparser: the reader CI systems' JUnit plugins agree with.
    suites = {suite.name: suite for suite in JUnitXml.fromfile(str(out))}
    assert set(suites) == {"transformers", "vllm", "template"}
    failed = {
        (name, case.name)
        for name, suite in suites.items()
        for case in suite
        if any(isinstance(result, Failure) for result in case.result)
    }
    # Llama 3.1 writes a call's arguments with tojson: vLLM, given JSON text, turns it
    # into an object (its rewrites say so), so the prompt differs from transformers'.
    assert ("vllm", "differs") in failed
    assert status == 1
    assert suites["vllm"].tests == len(list(suites["vllm"]))


def test_hugging_face_files_bring_their_special_tokens(tmp_path: Path, capsys) -> None:
    config = {
        "chat_template": LLAMA31.read_text(),
        "bos_token": "<|begin_of_text|>",
        "eos_token": "<|eot_id|>",
    }
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    _, from_folder = _json(capsys, str(tmp_path), "--engines", "llama.cpp")
    _, from_file = _json(capsys, str(tmp_path / "tokenizer_config.json"), "--engines", "llama.cpp")
    _, bare = _json(capsys, str(LLAMA31), "--engines", "llama.cpp")
    empty_bos = {f["id"] for f in bare["findings"] if "bos_token, which is empty" in f["message"]}
    assert empty_bos  # without the files the template prints an empty BOS...
    assert not empty_bos & _ids(from_folder, "warning")  # ...with them it has one
    assert _ids(from_folder, "warning") == _ids(from_file, "warning")


def _qwen3_gguf(path: Path) -> Path:
    """A GGUF header with Qwen3's template and a three-token vocabulary."""
    writer = GGUFWriter(path, arch="llama")
    writer.add_chat_template(QWEN3.read_text())
    writer.add_token_list(["<|im_start|>", "<|im_end|>", "a"])
    writer.add_eos_token_id(1)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


def test_a_gguf_header_is_read_as_the_upload_reads_it(tmp_path: Path, capsys) -> None:
    path = _qwen3_gguf(tmp_path / "model.gguf")
    status, report = _json(capsys, str(path), "--engines", "edge-llm")
    assert status == 1
    assert report["target"] == str(path)
    assert "load:edge-llm" in _ids(report, "error")


@needs_shared
def test_a_gguf_vocabulary_checks_the_tokens_the_template_prints(tmp_path: Path, capsys) -> None:
    # llama.cpp's Phi-3 vocabulary file holds a chat template: `<|end|>` closes its turns,
    # a token of the vocabulary (id 32007) that is not one its EOS ids name.
    vocab = VOCAB_DIR / "ggml-vocab-phi-3.gguf"
    status, report = _json(capsys, str(vocab), "--engines", "llama.cpp")
    assert status == 1
    said = [f["message"] for f in report["findings"] if f["severity"] == "error"]
    assert any("'<|end|>' (id 32007)" in message for message in said), said
    # The same template without the vocabulary: no ids to check it against.
    template = tmp_path / "phi-3.jinja"
    template.write_text(read_target(str(vocab), SourceLimits()).template)
    _, bare = _json(capsys, str(template), "--engines", "llama.cpp")
    assert not any("id 32007" in f["message"] for f in bare["findings"])


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["/nonexistent/template.jinja"], "does not exist"),
        # A mistyped file beside the checkout, one slash as in ORG/NAME: a file, not the Hub.
        (["templates_lib/llama-3.1.jinja"], "does not exist"),
        (["not a path/nor an id"], "does not exist"),
        ([str(QWEN3), "--engines", "nope"], "No engine nope"),
        ([str(QWEN3), "--engines", "tgi", "--output", "/nonexistent/out.xml"], "No such file"),
    ],
)
def test_an_unreadable_target_exits_2_with_a_sentence(args: list[str], said: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app.check", *args],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert said in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_an_accept_entry_without_a_reason_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t.jinja").write_text("{{ messages[0].content }}")
    (tmp_path / ".playground-check.toml").write_text('[[accept]]\nid = "load:edge-llm"\n')
    assert main([str(tmp_path / "t.jinja")]) == 2


@needs_shared
def test_its_findings_agree_with_the_analysis_view_for_the_same_state(client, capsys) -> None:
    vocab = VOCAB_DIR / "ggml-vocab-phi-3.gguf"
    _, report = _json(capsys, str(vocab), "--engines", "llama.cpp")
    source = client.post(
        "/api/sources/gguf", data=vocab.read_bytes(), content_type="application/octet-stream"
    ).json
    case = next(c for c in STANDARD if c["name"] == ANALYSED)
    # The page's state once the source is loaded: its template and special tokens.
    body = {"template": source["templates"]["default"], "messages": case["messages"]}
    body["special_tokens"] = source["special_tokens"]
    built_with(lambda path: client.get(path).json, source)
    answer = client.post("/api/analyze", json={**body, "source": source["id"],
                                               "add_generation_prompt": True}).json  # fmt: skip
    page = {f"analysis:{d['id']}" for d in answer["diagnostics"]}
    checked = {f["id"] for f in report["findings"] if f["check"] == "analysis"}
    assert page == checked and "analysis:end-marker-not-eog" in page
    lost = [p for p in answer["prefix_stability"] if p["answer_stays_prefix"] is False]
    prefix = [f for f in report["findings"] if f["id"].startswith("prefix:answer:")]
    assert len(lost) == len(prefix)


def test_share_prints_a_link_per_finding_that_opens_its_state(live_server, capsys) -> None:
    status, report = _json(
        capsys, str(QWEN3), "--engines", "edge-llm,tgi", "--share", live_server.url
    )
    assert status == 1
    load = next(f for f in report["findings"] if f["id"] == "load:edge-llm")
    differs = next(f for f in report["findings"] if f["check"] == "differs")
    with urllib.request.urlopen(load["share"] + ".json", timeout=30) as response:
        state = json.load(response)
    assert state["template"] == QWEN3.read_text() and state["engine"] == "edge-llm"
    with urllib.request.urlopen(differs["share"] + ".json", timeout=30) as response:
        state = json.load(response)
    assert (state["compare_engines"], state["view"]) == ("tgi", "diff")
    assert (
        state["messages"]
        == next(c for c in STANDARD if c["name"] == differs["conversation"])["messages"]
    )
    assert main([str(QWEN3), "--engines", "tgi", "--share", "http://127.0.0.1:9"]) == 2


def test_a_hub_id_is_read_through_the_pages_hub_client(tmp_path: Path, monkeypatch, capsys):
    files, gguf = tmp_path / "files", tmp_path / "gguf"
    files.mkdir(), gguf.mkdir()
    config = {"chat_template": QWEN3.read_text(), "eos_token": "<|im_end|>"}
    (files / "tokenizer_config.json").write_text(json.dumps(config))
    _qwen3_gguf(gguf / "Model-Q4_K_M.gguf")
    hub = FakeHub()
    hub.repos = {"org/model": Repo(files), "org/Model-GGUF": Repo(gguf)}
    monkeypatch.setenv("PLAYGROUND_HF_ENDPOINT", hub.url)
    try:
        for repo in ("org/model", "org/Model-GGUF"):
            status, report = _json(capsys, repo, "--engines", "edge-llm")
            assert (status, report["target"]) == (1, repo)
            assert "load:edge-llm" in _ids(report, "error")
        assert hub.fetched("org/model") == {"tokenizer_config.json"}
        assert hub.fetched("org/Model-GGUF") == {"Model-Q4_K_M.gguf"}
        assert main(["org/missing"]) == 2
        said = capsys.readouterr().err
        assert said.startswith("playground check: org/missing: ") and "Traceback" not in said
    finally:
        hub.close()


def test_prefix_stability_is_checked_with_each_engine(capsys) -> None:
    # DeepSeek-R1's template: transformers' request 2 starts with request 1 and its
    # answer; llama.cpp's does not (it renders the generation prompt's `<think>` another way).
    template = str(REPO / "templates_lib" / "deepseek-r1-distill.jinja")
    _, report = _json(capsys, template, "--engines", "llama.cpp,transformers.js")
    prefix = {f["id"] for f in report["findings"] if f["check"] == "prefix"}
    assert {"prefix:answer:llama.cpp:1", "prefix:answer:llama.cpp:2"} <= prefix
    assert not [name for name in prefix if "transformers" in name]


def test_the_templates_own_tool_calls_are_read_back_by_each_parser(capsys) -> None:
    # gpt-oss writes two calls in one answer; vLLM's gpt-oss parser reads the first only.
    # Edge-LLM does not load the template: its load finding stands for its parser too.
    template = str(REPO / "templates_lib" / "gpt-oss.jinja")
    _, report = _json(capsys, template, "--engines", "vllm,edge-llm")
    trips = {f["id"]: f for f in report["findings"] if f["check"] == "round-trip"}
    assert trips["round-trip:vllm:parallel-calls-answer"]["severity"] == "error"
    assert (
        "reads 1 of the 2 tool call(s)" in trips["round-trip:vllm:parallel-calls-answer"]["message"]
    )
    assert "round-trip:vllm:tool-call-answer" not in trips  # one call reads back whole
    assert not [name for name in trips if "edge-llm" in name]
    assert "load:edge-llm" in _ids(report, "error")


def test_refusals_a_publisher_cannot_fix_do_not_fail(capsys) -> None:
    # Llama 3.1 refuses parallel calls itself (raise_exception), and Edge-LLM's server
    # takes no continue_final_message field, whatever the template: neither fails CI.
    status, report = _json(capsys, str(LLAMA31), "--engines", "edge-llm")
    assert status == 0
    assert "render:transformers:parallel-tools" in _ids(report, "note")
    assert "render:edge-llm:continue" in _ids(report, "warning")
    assert main([str(LLAMA31), "--engines", "edge-llm", "--fail-on", "warning"]) == 1


def test_a_model_folder_from_the_suites_builder(tmp_path: Path, capsys) -> None:
    # chat_template.jinja beside additional_chat_templates/: transformers reads the file
    # (not the config's template), and Edge-LLM refuses a model with named templates.
    folder = transformers_repo(tmp_path / "model")
    status, report = _json(capsys, str(folder), "--engines", "edge-llm")
    assert status == 1
    load = next(f for f in report["findings"] if f["id"] == "load:edge-llm")
    assert "named" in load["message"] and "additional_chat_templates" in load["message"]
    target = read_target(str(folder), SourceLimits())
    assert target.template == (folder / "chat_template.jinja").read_text()
    assert target.special_tokens["bos_token"] == "<s>"
