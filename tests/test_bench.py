"""The benchmarks run after a plain `pip install -e .`: nothing they import needs the test extra."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from conftest import REPO


def test_the_chat_and_groups_benchmarks_and_their_fake_server_need_no_pytest():
    script = textwrap.dedent(f"""
        import json, runpy, sys, urllib.request
        sys.modules["pytest"] = None  # as after a plain install: importing pytest fails
        sys.modules["hypothesis"] = None
        for bench in ("chat", "groups"):
            runpy.run_path({str(REPO)!r} + f"/bench/{{bench}}.py", run_name="bench")  # imports, no run
        from fakeserver import FakeServer  # what chat.py imports when it runs its @jam part
        with FakeServer(reply="pong") as server:
            body = json.dumps({{"model": "m", "messages": [{{"role": "user", "content": "ping"}}]}}).encode()
            request = urllib.request.Request(server.openai_url + "/chat/completions", data=body,
                                             headers={{"Content-Type": "application/json"}})
            answer = json.load(urllib.request.urlopen(request, timeout=10))
        print(answer["choices"][0]["message"]["content"])
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "pong"
