"""The chat section of `rooms demo`: each addressing mode, a pass, the budget running out, /continue."""

from __future__ import annotations

from rooms_cli.chat.coordinator import continue_room, floor, run_message
from rooms_cli.chat.rooms import create_room, load_room

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rooms_cli.store.paths import Project

ROOM = "demo-chat"
ROSTER = ["architect", "researcher", "reviewer", "ops"]
SCRIPT = [
    ("open message: every eligible agent, in score order; most /pass", "Anyone have context on the auth middleware?"),
    ("direct address, with a typo: only the researcher answers", "@reseacher what's the rate limit on api.stripe.com?"),
    ("@jam: in parallel, from one snapshot — this uses up the budget", "@jam what's your angle on the api deploy design review?"),
    ("a direct mention at zero budget is queued", "@ops who gets paged for the database?"),
    ("/continue", None),
    ("@everyone: in series, /pass is not accepted", "@everyone what's your best guess on the deadlock?"),
]


def run(project: Project, show: Callable[[str, str], None]) -> None:
    from rooms_cli.project.config import load_config

    config = load_config(project)
    state = create_room(project, ROOM, ROSTER, exist_ok=True)
    show("cmd", f"rooms room create {ROOM} " + " ".join(f"--agent {a}" for a in ROSTER))
    show("line", f"budget: clamp(ceil(1.5 × {len(state.roster)}), 6, 21) = {state.budget_total} substantive replies")

    def on_event(kind: str, data: dict[str, Any]) -> None:
        record = data.get("record")
        if kind == "exhausted":
            show("line", f"· {data['text']}")
        elif kind == "queued":
            show("line", f"queued {', '.join('@' + a for a in data['agents'])} for /continue")
        elif record is None:
            return
        elif record.kind == "message":
            show("line", f"{record.speaker}: {record.text}")
        elif record.kind in ("pass", "flavor", "repeat"):
            show("italic", f"{record.speaker} {record.text}")
        else:
            show("line", f"· {record.text}")

    for why, text in SCRIPT:
        if text is None:
            show("cmd", f"rooms room continue --room {ROOM}    # reset the budget, replay the queued mention")
            with floor(project, ROOM):
                continue_room(project, config, ROOM, "you", on_event=on_event)
            continue
        show("cmd", f"rooms chat --room {ROOM} {text!r}    # {why}")
        with floor(project, ROOM):
            run_message(project, config, ROOM, "you", text, on_event=on_event)
    state = load_room(project, ROOM)
    show("line", f"budget now {state.budget_remaining}/{state.budget_total}; try `rooms chat --explain 'deploy latency'`")
