"""Processes and their memory, read from `/proc` (Linux) without psutil."""

from __future__ import annotations

import os

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def _stat_map() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, process group) for every process we can see."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                text = stat.read()
        except OSError:
            continue  # it exited meanwhile
        # The command name is in parentheses and may itself hold spaces or ')'.
        fields = text[text.rindex(b")") + 2 :].split()
        found[int(entry)] = (int(fields[1]), int(fields[2]))
    return found


def _parent_map() -> dict[int, int]:
    """pid -> parent pid for every process we can see."""
    return {pid: parent for pid, (parent, _) in _stat_map().items()}


def group_members(pgid: int) -> list[int]:
    """The processes still in process group `pgid` (zombies included)."""
    return sorted(pid for pid, (_, group) in _stat_map().items() if group == pgid)


def children(pid: int) -> list[int]:
    """The direct children of `pid`, sorted."""
    return sorted(child for child, parent in _parent_map().items() if parent == pid)


def process_tree(pid: int) -> list[int]:
    """`pid` and all its descendants (workers and their sandbox processes)."""
    by_parent: dict[int, list[int]] = {}
    for child, parent in _parent_map().items():
        by_parent.setdefault(parent, []).append(child)
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(by_parent.get(current, ()))
    return tree


def rss_bytes(pids: list[int]) -> int:
    """Summed resident set of `pids` (pages shared after fork are counted per process)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm") as statm:
                total += int(statm.read().split()[1]) * PAGE_SIZE
        except (OSError, IndexError, ValueError):
            continue
    return total


def command(pid: int) -> str:
    """The command line of `pid` ("" once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
