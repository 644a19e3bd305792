"""Atomic replace: temp file in the same directory, flush, fsync, os.replace, fsync the directory.

A reader (or a crash at any instant) sees the old content or the new, never a mix.
"""

from __future__ import annotations

import json
import os

from rooms_cli.store import changes, files
from rooms_cli.store.files import (  # in files.py: below jsonl.py, which makes a log whole with them
    UMASK,
    create_temp,
)

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    import yaml

    from rooms_cli.store.files import StrPath


def write_cache(path: StrPath, blob: bytes) -> bool:
    """Replace a local cache file (under .rooms/run/) atomically, without fsync and without failing:
    a cache lost in a crash only costs a rebuild, and a read-only checkout or a full disk still reads,
    only slower. No temp file is left behind. Whether it was stored."""
    import contextlib

    tmp = None
    try:
        fd, tmp = files.making_folder(path, lambda: create_temp(path))  # a cache is rewritten where it was
        with os.fdopen(fd, "wb") as handle:
            handle.write(blob)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False
    return True


def write_bytes(path: StrPath, data: bytes, mode: int = 0o644) -> None:
    """Replace `path` with `data` atomically (creating parent directories).

    The file gets `mode` narrowed by the user's umask, like any file `open` creates. A failed write
    (a full disk, a quota, a read-only file system) leaves the old file and no temp file behind and
    is a StorageError naming `path`.
    """
    from rooms_cli.core.errors import storage_error

    tmp = None
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        fd, tmp = create_temp(path)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode & ~UMASK)
        os.replace(tmp, path)
    except BaseException as exc:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if isinstance(exc, OSError):
            raise storage_error(path, exc) from None
        raise
    files.fsync_dir(os.path.dirname(path) or ".")
    changes.note(path)


def write_text(path: StrPath, text: str, mode: int = 0o644) -> None:
    write_bytes(path, text.encode("utf-8"), mode)


def write_json(path: StrPath, data: Any, mode: int = 0o644) -> None:
    """Write JSON with sorted keys and a final newline (stable diffs in git)."""
    try:
        text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except ValueError:  # NaN/Infinity are not JSON: no other tool could read the file back
        from rooms_cli.core.errors import InvalidInput
        from rooms_cli.store.jsonl import non_finite_field

        raise InvalidInput(f"{non_finite_field(data)} is not a finite number (NaN or infinity); use a finite number") from None
    write_text(path, text + "\n", mode)


def read_json(path: StrPath, default: Any = None) -> Any:
    """Read a JSON file; a missing file gives `default`, an unreadable one is an InvalidData error."""
    from rooms_cli.core.errors import InvalidData

    try:
        raw = files.read_bytes(path)
    except FileNotFoundError:
        return default
    except OSError as exc:
        raise InvalidData(f"cannot read {path}: {exc.strerror}") from None
    from rooms_cli.store import conflicts

    conflicts.check(path, raw)
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidData(f"{path} is not valid JSON ({exc}); fix or remove it") from None


def read_yaml(path: StrPath, default: Any = None) -> Any:
    """Read a YAML file; a missing file gives `default` (without importing yaml), a malformed one is an
    InvalidData error."""
    from rooms_cli.core.errors import InvalidData

    try:
        text = files.read_text(path)
    except FileNotFoundError:
        return default
    except UnicodeDecodeError:
        raise InvalidData(f"{path} is not UTF-8 text") from None
    except OSError as exc:
        raise InvalidData(f"cannot read {path}: {exc.strerror}") from None
    from rooms_cli.store import conflicts

    conflicts.check_text(path, text)
    import yaml

    try:
        data = yaml.load(text, Loader=unique_key_loader())  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise InvalidData(f"{path} is not valid YAML{where}: {getattr(exc, 'problem', exc)}") from None
    return default if data is None else data


_LOADER: type[yaml.SafeLoader] | None = None


def unique_key_loader() -> type[yaml.SafeLoader]:
    """yaml's SafeLoader, except that a key given twice in one mapping is an error: plain YAML keeps
    the last silently, so a second `providers:` pasted into .rooms.yaml would drop the first."""
    global _LOADER
    if _LOADER is None:
        import yaml

        class UniqueKeyLoader(yaml.SafeLoader):
            def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
                seen: dict[str, Any] = {}
                for key_node, _value in node.value:
                    key = self.construct_object(key_node, deep=True)
                    try:
                        first = seen.setdefault(key, key_node.start_mark.line + 1)
                    except TypeError:  # an unhashable key: SafeLoader reports it
                        continue
                    if first != key_node.start_mark.line + 1:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"the key {key!r} is given twice (lines {first} and "
                            f"{key_node.start_mark.line + 1}); merge the two into one", key_node.start_mark)
                return super().construct_mapping(node, deep=deep)

        _LOADER = UniqueKeyLoader
    return _LOADER
