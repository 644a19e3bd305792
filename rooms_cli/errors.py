"""Typed errors of the domain. Each carries a stable `code` and the exit code the CLI uses.

Exit codes (one place, documented in the README):
    0 ok · 1 error (not found, invalid input or data, provider failure) · 2 usage ·
    3 conflict (already claimed, lease lost, broadcast in flight, name taken, lock busy) · 4 timed out
"""

from __future__ import annotations


class ExitCode:
    OK = 0
    ERROR = 1
    USAGE = 2
    CONFLICT = 3
    TIMEOUT = 4


class RoomsError(Exception):
    """Base of every error a user can cause; `str(err)` is the one clear sentence."""

    code = "error"
    exit_code = ExitCode.ERROR

    def __init__(self, message: str, *, code: str | None = None, exit_code: int | None = None, data=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if exit_code is not None:
            self.exit_code = exit_code
        self.data = data

    def to_json(self) -> dict:
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


class ProviderError(RoomsError):
    code = "provider_error"


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
