"""The markdown files rooms writes and reads back (agents, deliberations, saved transcripts): a YAML
frontmatter block, then a body. Written so that what is read back is what was written.

- **Fields** (`yaml_fields`): YAML as a person would write it (unicode as is) when it reads back
  unchanged; else every field escaped. PyYAML writes some characters raw that YAML reads as a line
  break (NEL, U+0085, in a name became a space).
- **Prose** (`lines`): a body a person or a model writes (a directive, a hand-off note) keeps its line
  breaks as "\\n". Its readers see no other: python-frontmatter turns "\\r\\n" into "\\n", and a file
  read as text (universal newlines) turns a lone "\\r" into "\\n" too. So the writer does the same
  first, and a directive given with Windows line ends reads back as it was written. A saved
  transcript is not prose: its messages are kept byte for byte (chat/saved.py).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any


def lines(text: str) -> str:
    """`text` with its line breaks as "\\n": "\\r\\n" and a lone "\\r" each become one "\\n"."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def yaml_fields(fields: dict[str, Any], *, flow_lists: bool = False) -> str:
    """The YAML text of a frontmatter block holding `fields` in their order (without the `---` lines):
    readable when it reads back as `fields`, every string escaped when it would not. `flow_lists`:
    a list of plain values on one line (`tags: [a, b]`)."""
    import yaml

    style = None if flow_lists else False
    text: str = yaml.safe_dump(fields, sort_keys=False, allow_unicode=True, default_flow_style=style)
    if yaml.safe_load(text) == fields:
        return text
    escaped: str = yaml.safe_dump(fields, sort_keys=False, allow_unicode=False, default_flow_style=style)
    return escaped
