# SPDX-License-Identifier: MIT
"""Exceptions of obc: one class per obc_result_t, all under ObcError.

Each also derives from the built-in exception a Python user would catch for
that kind of failure (a timeout is a TimeoutError, a lost peer a
ConnectionError, a bad argument a ValueError), so generic handlers work.
The message is obc's own (obc_comm_last_error): which rank, which
operation, what differed.
"""


class ObcError(RuntimeError):
    """Base class of every error obc raises for a failed call."""

    code = None  # the obc_result_t value

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class _PlainMessage:
    """For classes that also derive from OSError: OSError would read the
    (message, code) arguments as (errno, strerror) and print them so; these
    keep obc's message as their text."""

    def __init__(self, message, code=None):
        ObcError.__init__(self, message, code)

    def __str__(self):
        return self.message


class InvalidArgument(ObcError, ValueError):
    code = 1


class NoMemory(ObcError, MemoryError):
    code = 2


class SystemCallError(_PlainMessage, ObcError, OSError):
    code = 3


class Timeout(_PlainMessage, ObcError, TimeoutError):
    code = 4


class PeerLost(_PlainMessage, ObcError, ConnectionError):
    code = 5


class Mismatch(ObcError):
    """Ranks disagree on the collective or its arguments (or, from
    sync_module, on the model's names, shapes or dtypes)."""

    code = 6


class Aborted(ObcError):
    code = 7


class AuthError(_PlainMessage, ObcError, PermissionError):
    code = 8


class ProtocolError(ObcError):
    code = 9


class InternalError(ObcError):
    code = 10


_BY_CODE = {c.code: c for c in (InvalidArgument, NoMemory, SystemCallError, Timeout, PeerLost,
                                Mismatch, Aborted, AuthError, ProtocolError, InternalError)}


def from_status(status, message):
    cls = _BY_CODE.get(status, ObcError)
    return cls(message, status)
