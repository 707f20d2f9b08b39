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


class InvalidArgument(ObcError, ValueError):
    code = 1


class NoMemory(ObcError, MemoryError):
    code = 2


class SystemCallError(ObcError, OSError):
    code = 3

    def __init__(self, message, code=None):
        ObcError.__init__(self, message, code)

    def __str__(self):
        return self.message


class Timeout(ObcError, TimeoutError):
    code = 4

    def __init__(self, message, code=None):
        ObcError.__init__(self, message, code)

    def __str__(self):
        return self.message


class PeerLost(ObcError, ConnectionError):
    code = 5

    def __init__(self, message, code=None):
        ObcError.__init__(self, message, code)

    def __str__(self):
        return self.message


class Mismatch(ObcError):
    """Ranks disagree on the collective or its arguments (or, from
    sync_module, on the model's names, shapes or dtypes)."""

    code = 6


class Aborted(ObcError):
    code = 7


class AuthError(ObcError, PermissionError):
    code = 8

    def __init__(self, message, code=None):
        ObcError.__init__(self, message, code)

    def __str__(self):
        return self.message


class ProtocolError(ObcError):
    code = 9


class InternalError(ObcError):
    code = 10


_BY_CODE = {c.code: c for c in (InvalidArgument, NoMemory, SystemCallError, Timeout, PeerLost,
                                Mismatch, Aborted, AuthError, ProtocolError, InternalError)}


def from_status(status, message):
    cls = _BY_CODE.get(status, ObcError)
    return cls(message, status)
