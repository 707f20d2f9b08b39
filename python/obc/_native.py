# SPDX-License-Identifier: MIT
"""The 1:1 layer over include/obc.h: libobc loaded with ctypes, one
prototype per C function, and every status turned into an exception.

Nothing here knows NumPy or torch: callers pass raw pointers and counts
(obc/_buffers.py makes them). ctypes releases the GIL around every call
into a CDLL, so blocking collectives never stall other Python threads.
"""
import ctypes
import os

from . import errors

# obc_dtype_t and obc_redop_t, in the order of include/obc.h.
INT8, UINT8, INT32, UINT32, INT64, UINT64, FLOAT16, BFLOAT16, FLOAT32, FLOAT64 = range(10)
SUM, PROD, MIN, MAX, AVG = range(5)
# obc_coll_t, in the order of include/obc.h (obc_comm_algorithm).
COLL_BROADCAST, COLL_BARRIER, COLL_ALLREDUCE, COLL_REDUCE, COLL_ALLGATHER, COLL_REDUCE_SCATTER = \
    range(6)


def _library_path():
    """OBC_LIBRARY; else the checkout's build/lib (python/obc/../../build);
    else an installed copy beside this package (PREFIX/lib, as `make
    install` lays it out); else the loader's search path."""
    explicit = os.environ.get("OBC_LIBRARY")
    if explicit:
        return explicit
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "..", "..", "build", "lib", "libobc.so"),
                      os.path.join(here, "..", "..", "..", "libobc.so")):
        if os.path.exists(candidate):
            return os.path.normpath(candidate)
    return "libobc.so"


def _load():
    path = _library_path()
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(
            f"obc: cannot load libobc ({path}): {e}. Build it with `make` in the "
            f"checkout, install it (`make install`), or set OBC_LIBRARY") from e


lib = _load()
path = lib._name

_c = ctypes
_p = _c.c_void_p
_pp = _c.POINTER(_c.c_void_p)
_sz = _c.c_size_t
_int = _c.c_int


def _proto(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


_proto("obc_comm_init_env", _int, _pp)
_proto("obc_get_unique_id", _int, _c.c_char_p)
_proto("obc_comm_init_rank", _int, _pp, _int, _c.c_char_p, _int)
_proto("obc_comm_destroy", _int, _p)
_proto("obc_comm_abort", _int, _p)
_proto("obc_comm_rank", _int, _p)
_proto("obc_comm_size", _int, _p)
_proto("obc_comm_set_timeout", _int, _p, _c.c_double)
_proto("obc_comm_split", _int, _p, _int, _int, _pp)
_proto("obc_comm_dup", _int, _p, _pp)
_proto("obc_broadcast", _int, _p, _p, _sz, _int, _int, _p)
_proto("obc_ibroadcast", _int, _p, _p, _sz, _int, _int, _p, _pp)
_proto("obc_broadcast_as", _int, _p, _p, _sz, _int, _int, _int, _p)
_proto("obc_mem_alloc", _int, _pp, _sz, _p)
_proto("obc_mem_free", _int, _p, _p)
_proto("obc_barrier", _int, _p)
_proto("obc_ibarrier", _int, _p, _pp)
_proto("obc_allreduce", _int, _p, _p, _sz, _int, _int, _p)
_proto("obc_iallreduce", _int, _p, _p, _sz, _int, _int, _p, _pp)
_proto("obc_reduce", _int, _p, _p, _sz, _int, _int, _int, _p)
_proto("obc_ireduce", _int, _p, _p, _sz, _int, _int, _int, _p, _pp)
_proto("obc_allgather", _int, _p, _p, _sz, _int, _p)
_proto("obc_iallgather", _int, _p, _p, _sz, _int, _p, _pp)
_proto("obc_reduce_scatter", _int, _p, _p, _sz, _int, _int, _p)
_proto("obc_ireduce_scatter", _int, _p, _p, _sz, _int, _int, _p, _pp)
# point-to-point: the tagged forms serve every call (tag 0 is the untagged one)
_intp = _c.POINTER(_int)
_proto("obc_send_tag", _int, _p, _sz, _int, _int, _int, _p)
_proto("obc_recv_tag", _int, _p, _sz, _int, _int, _int, _intp, _p)
_proto("obc_isend_tag", _int, _p, _sz, _int, _int, _int, _p, _pp)
_proto("obc_irecv_tag", _int, _p, _sz, _int, _int, _int, _intp, _p, _pp)
# the personalised collectives (counts and displacements in elements)
_szp = _c.POINTER(_sz)
_proto("obc_gather", _int, _p, _p, _sz, _int, _int, _p)
_proto("obc_igather", _int, _p, _p, _sz, _int, _int, _p, _pp)
_proto("obc_scatter", _int, _p, _p, _sz, _int, _int, _p)
_proto("obc_iscatter", _int, _p, _p, _sz, _int, _int, _p, _pp)
_proto("obc_alltoall", _int, _p, _p, _sz, _int, _p)
_proto("obc_ialltoall", _int, _p, _p, _sz, _int, _p, _pp)
_proto("obc_alltoallv", _int, _p, _szp, _szp, _p, _szp, _szp, _int, _p)
_proto("obc_ialltoallv", _int, _p, _szp, _szp, _p, _szp, _szp, _int, _p, _pp)
_proto("obc_check_consistency", _int, _p, _sz, _int, _c.POINTER(_int), _c.POINTER(_int), _p)
_proto("obc_hash64", _c.c_uint64, _p, _sz)
_proto("obc_wait", _int, _p)
_proto("obc_test", _int, _p, _c.POINTER(_int))
_proto("obc_comm_synchronize", _int, _p)
_proto("obc_group_start", _int)
_proto("obc_group_end", _int)
_proto("obc_strerror", _c.c_char_p, _int)
_proto("obc_result_name", _c.c_char_p, _int)
_proto("obc_comm_last_error", _c.c_char_p, _p)
_proto("obc_comm_algorithm", _int, _p, _int, _sz, _c.c_char_p, _sz)
_proto("obc_comm_algorithm_forced", _int, _p, _int, _c.c_char_p, _sz)
_proto("obc_dtype_size", _sz, _int)
_proto("obc_version", _c.c_char_p)

UNIQUE_ID_BYTES = 128
UNDEFINED = -1  # OBC_UNDEFINED: the color of a rank that joins no new communicator


def _result_codes():
    """{identifier: value} of every obc_result_t, from the library's one table
    (the codes are contiguous from 0; obc_result_name is NULL past the last)."""
    codes = {}
    while True:
        name = lib.obc_result_name(len(codes))
        if name is None:
            return codes
        codes[name.decode()] = len(codes)


RESULTS = _result_codes()
IN_PROGRESS = RESULTS["OBC_IN_PROGRESS"]  # a status of obc_test, not an error
errors.bind_codes(RESULTS)


def last_error(comm):
    """obc's detail of the last failure on comm (a handle or None)."""
    text = lib.obc_comm_last_error(comm)
    return text.decode("utf-8", "replace") if text else ""


def check(status, comm=None, what=None):
    """Raise the exception class of status (an obc_result_t), carrying
    obc's own message: the communicator's last error, or this thread's
    when the failure had no communicator (init, argument checks)."""
    if status == 0:
        return
    detail = last_error(comm) if comm else ""
    if not detail:
        detail = last_error(None)
    if not detail:
        detail = lib.obc_strerror(status).decode()
    if what:
        detail = f"{what}: {detail}"
    raise errors.from_status(status, detail)


def version():
    return lib.obc_version().decode()
