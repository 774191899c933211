"""The two-process DDP example's mechanics on the CPU (gloo, 2 processes, a small graph): the
parameters are identical across ranks and equal to one process accumulating both ranks'
gradients. The GPU run (NCCL, one GPU per rank) is the same script under torchrun."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ddp_train.py"


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (children first found, then theirs), read from /proc (none
    where there is no /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            # The parent is the 2nd field after the parenthesised command (which may hold spaces).
            ppid = int(entry.joinpath("stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


@pytest.mark.parametrize("model", ["gat", "gt"])
def test_ddp_on_two_cpu_processes_matches_gradient_accumulation(model, tmp_path):
    out = tmp_path / "ddp.json"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", str(EXAMPLE)]
    cmd += ["--backend", "gloo", "--device", "cpu", "--check", "--model", model, "--steps", "3", "--nodes", "300"]
    cmd += ["--degree", "6", "--features", "12", "--hidden", "4", "--heads", "2", "--batch-size", "16", "--fanout", "4,4"]
    cmd += ["--json", str(out), "--timeout", "60"]
    # In a session of its own, so that a hang is cut with every worker torchrun started (a
    # timeout of `subprocess.run` kills torchrun alone and leaves its workers behind).
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        # torchrun starts each worker in a session of its own: kill them by ancestry too.
        for pid in [*_descendants(proc.pid), proc.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.killpg(proc.pid, signal.SIGKILL)
        try:
            stdout, stderr = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            # A worker in a process group of its own still holds the pipes: fail without them.
            stdout, stderr = "", "(its output is held by a worker that outlived torchrun)"
        pytest.fail(f"the two-process run did not finish in 300 s\n{stdout}{stderr}")
    assert proc.returncode == 0, stdout + stderr
    result = json.loads(out.read_text())
    assert result["world_size"] == 2
    assert result["identical_across_ranks"] is True
    assert result["equal_to_accumulation"] is True, result
