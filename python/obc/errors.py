# SPDX-License-Identifier: MIT
"""Exceptions of obc: one class per obc_result_t, all under ObcError.

Each also derives from the built-in exception a Python user would catch for
that kind of failure (a timeout is a TimeoutError, a lost peer a
ConnectionError, a bad argument a ValueError), so generic handlers work.
The message is obc's own (obc_comm_last_error): which rank, which
operation, what differed.

Each class names its obc_result_t (`result`, the identifier of include/obc.h);
the number (`code`) comes from the library when obc/_native.py loads it
(obc_result_name), so no value is copied here. `bind_codes` refuses a name the
library does not have, and tests/test_errors.py checks that every error code of
the library has its class.
"""


class ObcError(RuntimeError):
    """Base class of every error obc raises for a failed call."""

    result = None  # the obc_result_t identifier, e.g. "OBC_ERR_TIMEOUT"
    code = None  # its value, from the library (bind_codes)

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
    result = "OBC_ERR_INVALID_ARG"


class NoMemory(ObcError, MemoryError):
    result = "OBC_ERR_NO_MEMORY"


class SystemCallError(_PlainMessage, ObcError, OSError):
    result = "OBC_ERR_SYSTEM"


class Timeout(_PlainMessage, ObcError, TimeoutError):
    result = "OBC_ERR_TIMEOUT"


class PeerLost(_PlainMessage, ObcError, ConnectionError):
    result = "OBC_ERR_PEER_LOST"


class Mismatch(ObcError):
    """Ranks disagree on the collective or its arguments (or, from
    sync_module, on the model's names, shapes or dtypes)."""

    result = "OBC_ERR_MISMATCH"


class Aborted(ObcError):
    result = "OBC_ERR_ABORTED"


class AuthError(_PlainMessage, ObcError, PermissionError):
    result = "OBC_ERR_AUTH"


class ProtocolError(ObcError):
    result = "OBC_ERR_PROTOCOL"


class InternalError(ObcError):
    result = "OBC_ERR_INTERNAL"


_CLASSES = (InvalidArgument, NoMemory, SystemCallError, Timeout, PeerLost, Mismatch, Aborted,
            AuthError, ProtocolError, InternalError)
_BY_CODE = {}


def bind_codes(values):
    """Give each class its code from values ({identifier: number}, read from
    the library by obc/_native.py)."""
    for cls in _CLASSES:
        if cls.result not in values:
            raise ImportError(f"obc: libobc has no {cls.result} (errors.{cls.__name__}); "
                              f"is it an older library than this package?")
        cls.code = values[cls.result]
        _BY_CODE[cls.code] = cls


def from_status(status, message):
    cls = _BY_CODE.get(status, ObcError)
    return cls(message, status)
