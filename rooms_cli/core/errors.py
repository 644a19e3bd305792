"""Typed errors of the domain. Each carries a stable `code` and the exit code the CLI uses.

Exit codes (one place, documented in the README):
    0 ok · 1 error (not found, invalid input or data, provider failure) · 2 usage ·
    3 conflict (already claimed, lease lost, broadcast in flight, name taken, lock busy) · 4 timed out
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    import os
    from typing import Any


class ExitCode:
    OK = 0
    ERROR = 1
    USAGE = 2
    CONFLICT = 3
    TIMEOUT = 4
    NOT_PRINTED = 5


class RoomsError(Exception):
    """Base of every error a user can cause; `str(err)` is the one clear sentence."""

    code = "error"
    exit_code = ExitCode.ERROR

    def __init__(self, message: str, *, code: str | None = None, exit_code: int | None = None, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if exit_code is not None:
            self.exit_code = exit_code
        self.data = data

    def fold(self) -> RoomsError:
        """The message on one line (a parser's error quoted whole spans lines), so that an error is
        always exactly one line a script can read."""
        if "\n" in self.message:
            self.message = " ".join(part.strip() for part in self.message.splitlines() if part.strip())
        return self

    def to_json(self) -> dict[str, Any]:
        err = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return {"error": err}


class NotFound(RoomsError):
    code = "not_found"


class InvalidInput(RoomsError):
    code = "invalid_input"


class InvalidData(RoomsError):
    """A file under .rooms/ (or .rooms.yaml) that cannot be used as it is."""

    code = "invalid_data"


class MergeConflict(InvalidData):
    """A file under .rooms/ still holds git's conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`): a merge
    was left unresolved. `data` names the file; `rooms doctor` lists every such file with the fix."""

    code = "merge_conflict"


class NotInitialized(RoomsError):
    code = "not_initialized"


class StorageError(RoomsError):
    """A file could not be written or read: a full disk (ENOSPC), a quota (EDQUOT), a read-only
    file system (EROFS), a permission. Exit 1; the file is named and nothing is left half-written."""

    code = "io_error"


_IO_HINTS = {
    "ENOSPC": "the disk is full; free some space and run the command again",
    "EDQUOT": "the disk quota is exceeded; free some space and run the command again",
    "EROFS": "the file system is read-only",
    "EACCES": "permission denied",
    "EPERM": "permission denied",
}


def storage_error(path: str | os.PathLike[str], exc: OSError, doing: str = "write") -> StorageError:
    """One sentence for an OSError on `path`: the file, the cause, and the fix when there is one."""
    import errno

    name = errno.errorcode.get(exc.errno or 0, "")
    cause = _IO_HINTS.get(name) or exc.strerror or type(exc).__name__
    return StorageError(f"cannot {doing} {path}: {cause}", data={"errno": name} if name else None)


class NotPrinted(RoomsError):
    """The command did what it was asked (its write completed) but printing the result failed (stdout on a
    full disk, a failing device). Exit 5: a script must not run it again — that would send the message
    twice or claim a second task while the first lease is held."""

    code = "not_printed"
    exit_code = ExitCode.NOT_PRINTED


class ProviderError(RoomsError):
    code = "provider_error"


class ContextOverflow(ProviderError):
    """The server refused the prompt as longer than the model's context window.

    `n_ctx` (the window) and `n_prompt` (the prompt's tokens) are set when the server's message
    says them. The message names the knobs (`context_window:`, `max_tokens:`); callers that can
    trim the prompt (chat) retry once with tighter trimming before showing it."""

    code = "context_overflow"

    def __init__(self, message: str, *, n_ctx: int | None = None, n_prompt: int | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.n_ctx = n_ctx
        self.n_prompt = n_prompt
        if self.data is None:
            self.data = {k: v for k, v in (("n_ctx", n_ctx), ("n_prompt", n_prompt)) if v is not None} or None


class Conflict(RoomsError):
    code = "conflict"
    exit_code = ExitCode.CONFLICT


class LockBusy(Conflict):
    code = "lock_busy"


class UsageError(RoomsError):
    code = "usage"
    exit_code = ExitCode.USAGE


class TimedOut(RoomsError):
    code = "timed_out"
    exit_code = ExitCode.TIMEOUT


def as_rooms_error(exc: BaseException) -> RoomsError:
    """Any exception as the RoomsError a user is shown: itself; an OSError naming a file (a directory,
    unreadable, a full disk…: the user's to fix) as one sentence naming the file; else a bug, said
    in one line ("internal error")."""
    if isinstance(exc, RoomsError):
        return exc
    if isinstance(exc, OSError) and exc.filename:
        return storage_error(exc.filename, exc, "use")
    return RoomsError(
        f"internal error: {type(exc).__name__}: {exc} (run with ROOMS_DEBUG=1 for the traceback)", code="internal",
    )
