"""`/pass`: how an agent says it has nothing to add — the one rule every part applies to a reply.

Real models rarely answer with the bare token, so a reply is a pass when it is SHORT (at most
`PASS_WORDS` words, one paragraph) and says `/pass` anywhere — `/pass`, `/pass.`, `**/PASS**`,
`"/pass"`, `ops: /pass`, `/pass — nothing to add`, `Nothing new from me. /pass` — or is just the
word `pass` (`PASS`, `Pass.`, `I'll pass.`, `pass: nothing to add`). A longer reply that mentions
`/pass` in its content is a reply. Chat records a pass as a pass (no budget spent), messaging's
wake delivers nothing, watch shows "passes".

Where a provider honours a JSON schema, chat asks for `PASS_SCHEMA` (`{"speak": bool, "message":
str}`) instead; `read_structured` reads such a reply (speak false, or an empty message, is a pass)
and gives None for text that is not that object, which is then read as text.
"""

from __future__ import annotations

import re

PASS = "/pass"
PASS_WORDS = 12  # a reply longer than this is a reply, whatever it says about /pass

PASS_SCHEMA = {
    "type": "object",
    "properties": {
        "speak": {"type": "boolean"},
        "message": {"type": "string"},
    },
    "required": ["speak", "message"],
    "additionalProperties": False,
}

# patterns compiled on first use (re's cache): a reply without the word "pass" needs none of them
_LABEL = r"^\s*(?:[\[(<*_]*@?[\w.-]{1,40}[\])>*_]*\s*:\s*)+"  # leading `name:` labels
_WRAP = "`*_\"'“”‘’«»()[] \t\r\n"
_TOKEN = r"(?i)(?<![\w/])/pass(?![\w/-])"
_WORD = r"(?i)^(?:i\s+|i'll\s+|i\s+will\s+)?pass(?:$|\s*[.!…,:;—–(-])"


def _core(text: str) -> str:
    return re.sub(_LABEL, "", text.strip(), count=1).strip(_WRAP)


def is_pass(text: str) -> bool:
    """True for a short reply that passes (`/pass` in any dress, or the bare word; see the module)."""
    plain = text.strip(_WRAP)
    if not plain or len(plain.split()) > PASS_WORDS + 2 or "\n\n" in plain:
        return False
    if "pass" not in plain.casefold():  # both forms hold the word: most replies are told apart without a pattern
        return False
    core = _core(text)
    return bool(re.search(_TOKEN, plain) or re.match(_WORD, plain) or re.match(_WORD, core))



def could_still_be_pass(start: str) -> bool:
    """True while a streamed reply that begins with `start` may still turn out to be a pass: it is
    still short enough (a pass may come last: `Nothing to add. /pass`)."""
    core = _core(start)
    return len(core.split()) <= PASS_WORDS and "\n\n" not in core


def read_structured(text: str) -> tuple[bool, str] | None:
    """(speak, message) from a `PASS_SCHEMA` reply; None when `text` is not such an object.

    A reply cut by the token limit is read as far as it goes (its message is what arrived)."""
    import json

    raw = text.strip()
    if raw.startswith("```"):  # a fenced object
        raw = raw.strip("`").removeprefix("json").strip()
    if not raw.startswith("{"):
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return _read_partial(raw)
    if not isinstance(data, dict) or not isinstance(data.get("speak", True), bool):
        return None
    message = data.get("message")
    if not isinstance(message, str):
        return None
    speak = bool(data.get("speak", True)) and bool(message.strip()) and not is_pass(message)
    return speak, message.strip()


_SPEAK = re.compile(r'"speak"\s*:\s*(true|false)')
_MESSAGE = re.compile(r'"message"\s*:\s*"')


def _read_partial(raw: str) -> tuple[bool, str] | None:
    """An object the limit cut short: `speak` if it came, and the message's text so far."""
    speak, message = streaming_object(raw)
    if speak is None and message is None:
        return None
    message = message or ""
    return speak is not False and bool(message.strip()) and not is_pass(message), message.strip()


def streaming_object(raw: str) -> tuple[bool | None, str | None]:
    """A `PASS_SCHEMA` object as far as it arrived: `speak` (None until it came) and the message's
    text so far (None until it began)."""
    speak = _SPEAK.search(raw)
    start = _MESSAGE.search(raw)
    return (speak.group(1) == "true" if speak else None), (partial_string(raw[start.end():]) if start else None)


def partial_string(body: str) -> str:
    """The text of a JSON string whose opening quote came just before `body`, as far as it is
    complete (stops at the closing quote, or before an escape that was cut)."""
    import json

    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == '"':
            break
        if ch == "\\":
            if body[i + 1:i + 2] == "u":
                chunk = body[i:i + 6]
                if len(chunk) < 6:
                    break
                step = 6
            else:
                chunk = body[i:i + 2]
                if len(chunk) < 2:
                    break
                step = 2
            try:
                out.append(json.loads(f'"{chunk}"'))
            except ValueError:
                out.append(chunk)
            i += step
            continue
        out.append(ch)
        i += 1
    return "".join(out)
