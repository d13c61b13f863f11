"""`./playground check TARGET`: the command line, its options and exit status.

Exit 0 when no finding (not accepted) reaches `--fail-on`, 1 when one does, 2 when the
target, an option or the accept file cannot be read (one sentence, no traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from app.check.accept import apply, config_path, read_accepted
from app.check.findings import SEVERITIES
from app.check.hub import is_hub_id, read_hub
from app.check.output import as_json, as_junit, as_text
from app.check.run import Result, run_check
from app.check.share import shared
from app.check.target import TargetError, read_target
from app.check.vocabulary import with_vocabulary
from app.config import load_settings, render_limits, source_limits
from app.pool import PoolUnavailable
from app.render import engines
from app.render.pool import SandboxPool

OK, FAILED, UNREADABLE = 0, 1, 2
#: Sandbox workers: one per core of a CI runner is plenty for one template.
WORKERS = 2


def _parser() -> argparse.ArgumentParser:
    """The command line: a target and its options."""
    parser = argparse.ArgumentParser(
        prog="./playground check",
        description="Check a chat template with every runtime the playground reproduces.",
    )
    parser.add_argument("target", help="a template file, a GGUF file, a folder of "
                        "Hugging Face files, a tokenizer_config.json or a Hub id")  # fmt: skip
    parser.add_argument("--format", choices=("text", "json", "junit"), default="text")
    parser.add_argument("--engines", help="comma-separated engine ids (default: all): "
                        + ", ".join(engines.ENGINES))  # fmt: skip
    parser.add_argument("--fail-on", choices=SEVERITIES[:2], default="error")
    parser.add_argument("--config", help="the accept file (default: .playground-check.toml "
                        "beside the target)")  # fmt: skip
    parser.add_argument("--output", help="write the report to this file (default: stdout)")
    parser.add_argument("--share", metavar="URL", help="a running playground: print a share "
                        "link per finding, made by its /api/shares")  # fmt: skip
    return parser


def _engines(text: str | None) -> set[str] | None:
    """The engine ids `--engines` names (None: all); TargetError for an unknown one."""
    if text is None:
        return None
    chosen = {name.strip() for name in text.split(",") if name.strip()}
    unknown = sorted(chosen - set(engines.ENGINES))
    if unknown:
        known = ", ".join(engines.ENGINES)
        raise TargetError(f"No engine {', '.join(unknown)}: the engines are {known}.")
    return chosen


#: How a template or a model's files end: a name ending so that does not exist is a
#: mistyped path, not a Hub repository (ORG/NAME has the same one slash).
FILE_SUFFIXES = (".jinja", ".j2", ".txt", ".json", ".gguf")


def _names_a_file(name: str) -> bool:
    """Whether `name` reads as a file's path rather than a Hub id."""
    return name.endswith(FILE_SUFFIXES) and "://" not in name


def check(arguments: argparse.Namespace) -> Result:
    """Read the target and the accept file, then run the check in a sandbox pool."""
    settings = load_settings()
    only = _engines(arguments.engines)
    path = config_path(arguments.target, arguments.config)
    accepted = read_accepted(path) if path is not None else {}
    limits = source_limits(settings)
    name = arguments.target
    if not Path(name).exists() and not _names_a_file(name) and is_hub_id(name, settings):
        read = read_hub(name, settings, limits)
    else:
        read = read_target(name, limits)
    target, token_ids = with_vocabulary(read, limits)
    pool = SandboxPool(render_limits(settings), workers=WORKERS)
    try:
        result = run_check(target, pool, only, token_ids)
    finally:
        pool.close()
    result.findings = apply(result.findings, accepted)
    if arguments.share:
        result.findings = shared(result.findings, target, arguments.share)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns its exit status."""
    arguments = _parser().parse_args(argv)
    try:
        result = check(arguments)
    except (TargetError, ValueError) as error:
        print(f"playground check: {error}", file=sys.stderr)
        return UNREADABLE
    except PoolUnavailable as error:
        print(f"playground check: the sandbox workers did not start: {error}", file=sys.stderr)
        return UNREADABLE
    if arguments.format == "json":
        report = as_json(result)
    elif arguments.format == "junit":
        report = as_junit(result, arguments.fail_on)
    else:
        report = as_text(result)
    if arguments.output:
        try:
            with open(arguments.output, "w", encoding="utf-8") as file:
                file.write(report)
        except OSError as error:
            print(f"playground check: {arguments.output}: {error.strerror}.", file=sys.stderr)
            return UNREADABLE
    else:
        sys.stdout.write(report)
    worst = SEVERITIES.index(arguments.fail_on)
    failing = [
        f for f in result.findings if f.accepted is None and SEVERITIES.index(f.severity) <= worst
    ]
    return FAILED if failing else OK
