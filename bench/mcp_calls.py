"""The cost of one board step through `rooms mcp` (one server, many tool calls) against a `rooms`
process per step, as a ratio within one run. Needs the extra rooms-cli[mcp].

    python bench/mcp_calls.py [--calls 30]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def cli_calls(argv: list[str], calls: int, env: dict) -> list[float]:
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        samples.append(time.perf_counter() - start)
    return samples


async def mcp_calls(project: str, calls: int, env: dict) -> tuple[float, list[float]]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "rooms_cli", "mcp", "--dir", project, "--as", "dev"], env=env)
    start = time.perf_counter()
    async with Client(params) as client:
        await client.list_tools()
        started = time.perf_counter() - start
        samples = []
        for _ in range(calls):
            t0 = time.perf_counter()
            result = await client.call_tool("board", {})
            assert not result.is_error
            samples.append(time.perf_counter() - t0)
    return started, samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "rooms_cli", "init", tmp, "--example", "dev"], env=env, capture_output=True, check=True)
        env["ROOMS_DIR"] = tmp
        for i in range(20):
            subprocess.run([sys.executable, "-m", "rooms_cli", "task", "add", f"task {i}", "--lane", "dev", "--done", "done"],
                           env=env, capture_output=True, check=True)
        cli = statistics.median(cli_calls([sys.executable, "-m", "rooms_cli", "board", "--json"], args.calls, env))
        started, samples = asyncio.run(mcp_calls(tmp, args.calls, env))
        tool = statistics.median(samples)
    print(f"{'board of 20 tasks':<34}{'median ms':>10}{'× tool call':>12}")
    print(f"{'rooms mcp: one tool call':<34}{tool * 1000:>10.1f}{1.0:>12.1f}")
    print(f"{'rooms board --json (a process)':<34}{cli * 1000:>10.1f}{cli / tool:>12.1f}")
    print(f"{'rooms mcp: server start, once':<34}{started * 1000:>10.1f}{started / tool:>12.1f}")


if __name__ == "__main__":
    main()
