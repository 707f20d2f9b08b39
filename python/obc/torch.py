# SPDX-License-Identifier: MIT
"""obc as a torch.distributed backend: `import obc.torch` registers "obc",
then unchanged torch code runs over obc (docs/torch.md):

    import torch.distributed as dist, obc.torch
    dist.init_process_group("obc")          # torchrun, obcrun, tcp://, file://, store=
    dist.all_reduce(t); model = DistributedDataParallel(model)

Each process group owns one obc.Communicator, bootstrapped through the
group's torch store (rank 0 puts an obc unique id there). A call returns a
torch Work made from a torch Future (`_create_work_from_future`): a Work
subclass written in Python is never called back from C++ (DDP's reducer
would wait on it forever), a Future-backed one is.

Completion. obc allows one thread at a time per communicator, so every obc
call of a group is made under the group's lock. Blocking torch calls
(dist.all_reduce(t) without async_op, dist.send, ...) call Work.wait() at
once; when the caller is torch.distributed's own function and it will wait,
the backend makes the blocking obc call itself on the caller's thread (no
hand-off, the cheapest path for small messages) and returns a finished
Work. Every other call (async_op=True, DDP's hooks, isend/irecv) starts the
non-blocking obc call and hands its request to the group's completion
thread, which polls it (obc_test under the lock, released between polls,
so a wait never blocks the issue of the next call and isend never waits for
its recv) and completes the Future, whose callbacks run on that thread as
gloo's do.

Refusals: what obc cannot do raises RuntimeError on the caller. A refusal
that follows from arguments every rank shares (the reduce op, the dtype)
happens on every rank before any communication, so nobody waits. One that
follows from this rank's own tensor (not on the CPU, sparse) aborts the
group's communicator first, so the other ranks fail at once instead of
waiting for OBC_TIMEOUT.
"""
import atexit
import ctypes
import datetime
import sys
import threading
import time
import weakref
import zlib

import torch
import torch.distributed as dist
from torch._C import _distributed_c10d as _c10d

from . import _native as N
from .comm import Communicator

NAME = "obc"
_C10D = "torch.distributed.distributed_c10d"
_STORE_KEY = "obc/unique_id"

# Reducible dtypes (obc_dtype_t); anything else only moves as bytes.
_REDUCIBLE = {torch.int8: N.INT8, torch.uint8: N.UINT8, torch.int32: N.INT32,
              torch.int64: N.INT64, torch.float16: N.FLOAT16, torch.bfloat16: N.BFLOAT16,
              torch.float32: N.FLOAT32, torch.float64: N.FLOAT64}
for _name, _code in (("uint32", N.UINT32), ("uint64", N.UINT64)):  # torch 2.3+
    if hasattr(torch, _name):
        _REDUCIBLE[getattr(torch, _name)] = _code
_STRIDED = torch.strided
_SPARSE_COO = torch.sparse_coo
_SPARSE_MAX_DIMS = 16
_COMPLEX = {torch.complex64: torch.float32, torch.complex128: torch.float64}

_OPS = [(dist.ReduceOp.SUM, N.SUM, "SUM"), (dist.ReduceOp.PRODUCT, N.PROD, "PRODUCT"),
        (dist.ReduceOp.MIN, N.MIN, "MIN"), (dist.ReduceOp.MAX, N.MAX, "MAX")]
if hasattr(dist.ReduceOp, "AVG"):
    _OPS.append((dist.ReduceOp.AVG, N.AVG, "AVG"))
_REFUSED_OPS = [(getattr(dist.ReduceOp, n), n) for n in ("BAND", "BOR", "BXOR", "PREMUL_SUM")
                if hasattr(dist.ReduceOp, n)]

# The completion thread's polling: yield for this long after a request
# arrives or completes (small messages finish within it), then sleep with
# growing pauses up to the cap (large ones need no faster answer).
_POLL_SPIN_S = 200e-6
_POLL_SLEEP_MAX_S = 1e-3
# The thread ends after this long without work (it holds the group alive).
_IDLE_EXIT_S = 1.0

_p, _pp, _sz, _int = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_int
_szp = ctypes.POINTER(ctypes.c_size_t)
_ANY_SOURCE = -2  # OBC_ANY_SOURCE of obc.h
# The second round's C calls (API.md), looked up when first used so the
# backend works with a libobc that has only some of them: a missing one is
# emulated with the first round's collectives, or refused (send/recv).
_SECOND_ROUND = {
    "obc_isend_tag": (_p, _sz, _int, _int, _int, _p, _pp),
    "obc_irecv_tag": (_p, _sz, _int, _int, _int, ctypes.POINTER(_int), _p, _pp),
    "obc_igather": (_p, _p, _sz, _int, _int, _p, _pp),
    "obc_iscatter": (_p, _p, _sz, _int, _int, _p, _pp),
    "obc_ialltoall": (_p, _p, _sz, _int, _p, _pp),
    "obc_ialltoallv": (_p, _szp, _szp, _p, _szp, _szp, _int, _p, _pp),
}
_fns = {}


def _fn(name):
    """The ctypes function of a second-round call, or None if this libobc
    lacks it."""
    if name not in _fns:
        fn = getattr(N.lib, name, None)
        if fn is not None:
            fn.restype = _int
            fn.argtypes = list(_SECOND_ROUND[name])
        _fns[name] = fn
    return _fns[name]


# -- the profiler's records ------------------------------------------------------
# Under torch's profiler every call leaves one record, "obc:all_reduce" and so
# on with the input tensors' shapes, as gloo's "gloo:all_reduce" does. A record
# started here and ended from the completion thread would be lost (the
# profiler keeps its state per thread), so an asynchronous call's record ends
# through the Future the Work is made from, which carries that state over.
_profiling = getattr(torch.autograd, "_profiler_enabled", lambda: False)
_record_enter = getattr(torch.autograd, "_record_function_with_args_enter", None)
_record_exit = getattr(torch.autograd, "_record_function_with_args_exit", None)


def _record(what, inputs):
    """A started record of one call, or None when no profiler runs (the
    common case costs one C call)."""
    if _record_enter is None or not _profiling():
        return None
    return _record_enter(f"{NAME}:{what}", *inputs)


def _end_with(record, fut):
    """The Future a Work is made from: fut itself, or one that ends the
    record when fut completes (its value or error passes through)."""
    if record is None:
        return fut
    return torch.ops.profiler._call_end_callbacks_on_jit_fut(record, fut)


# -- the one torch-version shim -----------------------------------------------
def _backend_base():
    """(base class, init(self, rank, size)) of a Python backend. torch 1.13
    takes a ProcessGroup subclass, constructed as (rank, size), from the
    creator and calls its Python methods from C++. torch 2 still accepts
    such a subclass where ProcessGroup keeps that constructor; otherwise
    its Backend class (the same methods and options, wrapped in a
    ProcessGroup by torch) is the base."""
    base = _c10d.ProcessGroup
    if hasattr(_c10d, "Backend") and "arg0: int, arg1: int" not in (base.__init__.__doc__ or ""):
        base = _c10d.Backend
    return base, lambda self, rank, size: base.__init__(self, rank, size)


_Base, _base_init = _backend_base()


# -- helpers --------------------------------------------------------------------
def _done_work(value=None, record=None):
    """A Work already done (a call finished on the caller's thread); it ends
    the call's profiler record, if any."""
    fut = torch.futures.Future()
    work_fut = _end_with(record, fut)
    fut.set_result(value)
    return _c10d._create_work_from_future(work_fut)


def _c10d_called():
    """True when the backend method running now was called by one of
    torch.distributed's Python functions (dist.send, dist.all_reduce, ...):
    the first frame below this module's is theirs. Their Works are waited on
    from Python. C++ callers (DDP's reducer, _broadcast_coalesced) leave
    another module's frame there, or none."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    return frame is not None and frame.f_globals.get("__name__") == _C10D


def _fail_cpp_caller(thread_id, message):
    """A call from C++ (DDP's reducer) failed. torch 1.13 gives Python no way
    to fail a Future as C++ sees it: set_exception stores the exception as
    the Future's value, and the reducer, reading tensors out of that value,
    crashes the process (an empty list indexed). So the Future is completed
    with the call's own tensors, and the error is raised in the thread that
    made the call (the one running backward), at its next Python step: once
    backward returns, before the optimizer can use the unreduced gradients."""
    sys.stderr.write(f"{message} (raised in the thread that called it)\n")
    err = type("ObcBackendError", (RuntimeError,),
               {"__init__": lambda self: RuntimeError.__init__(self, message)})
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(err))


def _caller_waits(frame):
    """True when our caller is torch.distributed's own function and it
    will wait for the Work at once: dist.send/recv, or a collective called
    with async_op=False. (C++ callers such as DDP's reducer leave no
    distributed_c10d frame here.)"""
    if frame is None or frame.f_globals.get("__name__") != _C10D:
        return False
    name = frame.f_code.co_name
    if name in ("send", "recv"):
        return True
    if name in ("isend", "irecv"):
        return False
    return frame.f_locals.get("async_op", True) is False


# torch's ReduceOp wraps a hashable enum (.op); a dict on it is the cheap
# lookup (comparing ReduceOp objects costs microseconds each).
_OP_CODES = {o.op: code for o, code, _ in _OPS} if hasattr(dist.ReduceOp.SUM, "op") else {}


def _op_code(op, what):
    code = _OP_CODES.get(getattr(op, "op", None))
    if code is not None:
        return code
    for torch_op, code, _ in _OPS:
        if op == torch_op:
            return code
    for torch_op, name in _REFUSED_OPS:
        if op == torch_op:
            raise RuntimeError(f"obc backend: {what} with ReduceOp.{name} is not supported by "
                               f"obc (it has SUM, PRODUCT, MIN, MAX, AVG)")
    raise RuntimeError(f"obc backend: {what}: unknown reduce op {op!r}")


class _Tensor:
    """What C sees of one tensor: pointer, count and obc dtype of a dense
    CPU tensor, through a contiguous staging copy when the tensor is not
    contiguous (copy_back() writes an output into the original)."""
    __slots__ = ("t", "orig", "ptr", "count", "dtype")

    def __init__(self, t, dtype_code, count_bytes):
        self.orig = t
        self.t = t if t.is_contiguous() else t.contiguous()
        self.ptr = self.t.data_ptr()
        self.dtype = dtype_code
        self.count = self.t.numel() * (self.t.element_size() if count_bytes else 1)

    def copy_back(self):
        if self.t is not self.orig:
            self.orig.copy_(self.t)


class ObcProcessGroup(_Base):
    """A torch process group over one obc communicator."""

    def __init__(self, store, rank, size, timeout):
        _base_init(self, rank, size)
        self._rank, self._size = rank, size
        seconds = None
        # torch's default (30 min) is not a choice the user made: keep obc's
        # own (OBC_TIMEOUT) then; an explicit timeout= wins.
        if timeout is not None and timeout != _default_pg_timeout():
            seconds = timeout.total_seconds()
        # The key must not outlive this group: torch reuses store prefixes
        # (group names restart at 0 after destroy_process_group), and a stale
        # id would send the ranks of a later group on a long-lived store to
        # this one's finished rendezvous; from_store deletes it.
        self._comm = Communicator.from_store(store, rank, size, _STORE_KEY, timeout=seconds)
        self._handle = self._comm._handle
        self._lock = threading.Lock()
        self._cv = threading.Condition()
        self._pending = []  # [request, future, value, finish, keep]
        self._thread = None
        self._closed = False
        self._done = _done_work()  # returned by every blocking call (it is only waited on)
        self._seq = 0
        _live.add(self)

    # -- torch's view of the group ------------------------------------------
    def getBackendName(self):  # noqa: N802 (torch's name)
        return NAME

    def _get_backend_name(self):
        return NAME

    def name(self):
        return NAME

    def size(self):
        return self._size

    def rank(self):
        return self._rank

    # torch calls these on gloo and nccl groups (and on ours where it takes
    # us for gloo); the number counts the collectives issued on the group.
    def _set_sequence_number_for_group(self):
        self._seq = 0

    def _get_sequence_number_for_group(self):
        return self._seq

    @property
    def comm(self):
        """The obc.Communicator underneath (for obc's own calls)."""
        return self._comm

    # -- life cycle --------------------------------------------------------------
    def shutdown(self):
        """Finish what is pending and destroy the communicator."""
        with self._cv:
            self._closed = True
            thread = self._thread
            self._cv.notify()
        if thread is not None:
            thread.join()
        if self._comm is not None:
            comm, self._comm = self._comm, None
            comm.destroy()

    def __del__(self):
        try:
            self.shutdown()
        except Exception:  # interpreter shutdown: the library may be gone already
            pass

    # -- refusals ----------------------------------------------------------------
    def _local_refusal(self, what, message):
        """Abort the communicator (the other ranks fail at once), then raise."""
        N.lib.obc_comm_abort(self._handle)  # allowed from any thread, at any time
        raise RuntimeError(f"obc backend: {what} on rank {self._rank}: {message}; obc "
                           f"aborted this process group's communicator so that the other "
                           f"ranks fail now instead of waiting")

    def _check_local(self, t, what):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"obc backend: {what}: expected a tensor, got {type(t).__name__}")
        if t.device.type != "cpu":
            self._local_refusal(what, f"the tensor is on device '{t.device}'; obc moves CPU "
                                      f"memory only")
        if t.layout != torch.strided:
            self._local_refusal(what, f"the tensor's layout is {t.layout}; obc needs dense "
                                      f"tensors")

    def _reducible(self, t, op, what):
        """(_Tensor, op code) of a tensor to reduce; complex SUM/AVG reduce
        their real and imaginary parts as floats."""
        self._check_local(t, what)
        code = _op_code(op, what)
        dtype = _REDUCIBLE.get(t.dtype)
        if dtype is None and t.dtype in _COMPLEX and code in (N.SUM, N.AVG):
            view = _ComplexView(t)
            return view, code
        if dtype is None:
            extra = " (complex tensors: SUM and AVG only)" if t.dtype in _COMPLEX else ""
            raise RuntimeError(f"obc backend: {what} of dtype {t.dtype} is not supported by "
                               f"obc{extra}; it reduces int8, uint8, int32, int64, float16, "
                               f"bfloat16, float32 and float64")
        return _Tensor(t, dtype, False), code

    def _bytes(self, t, what):
        """_Tensor of a tensor that only moves: any dtype, as bytes."""
        self._check_local(t, what)
        return _Tensor(t, N.UINT8, True)

    def _root(self, root, what):
        if not 0 <= root < self._size:
            raise RuntimeError(f"obc backend: {what}: rank {root} is not a rank of this group "
                               f"(0..{self._size - 1})")
        return root

    # -- issuing -------------------------------------------------------------------
    def _call(self, blocking, nonblocking, args, value, finish, keep, frame, what, record):
        """Run one obc call: blocking on the caller's thread when torch
        waits at once, else non-blocking with the completion thread.
        record: the profiler's record of the call (_record), None if none
        runs; it ends when the call completes."""
        self._seq += 1
        if record is None and _caller_waits(frame):
            with self._lock:
                status = blocking(*args, self._handle)
            N.check(status, self._handle, what)
            if finish is not None:
                finish()
            return self._done
        return self._start(nonblocking, args, value, finish, keep, what, record)

    def _async(self, fn, args, value, finish, keep, what, record, source=None):
        """A non-blocking call only (the second round's calls, whose
        blocking form we do not need): start it, hand it to the thread."""
        self._seq += 1
        return self._start(fn, args, value, finish, keep, what, record, source)

    def _start(self, fn, args, value, finish, keep, what, record, source=None):
        req = ctypes.c_void_p()
        try:
            with self._lock:
                status = fn(*args, self._handle, ctypes.byref(req))
            N.check(status, self._handle, what)
        except BaseException:
            if record is not None:
                _record_exit(record)
            raise
        return self._enqueue(req, value, finish, keep, record, source)

    def _enqueue(self, req, value, finish, keep, record, source=None):
        """Hand a started request to the completion thread. The Work is one
        made from a Future, which C++ callers can wait on; for torch's
        Python functions it is wrapped so that wait() raises the call's
        error (the Future's Work returns True whatever the Future holds),
        and a receive from any source (source: where obc writes the
        sender) is always wrapped, for the sender."""
        fut = torch.futures.Future()
        work_fut = _end_with(record, fut)  # before the thread can complete fut
        checked = source is not None or _c10d_called()
        caller = None if checked else threading.get_ident()
        with self._cv:
            self._pending.append([req, fut, value, finish, keep, caller])
            if self._thread is None:
                self._thread = threading.Thread(target=self._complete_loop, daemon=True,
                                                name=f"obc-torch-{self._rank}")
                self._thread.start()
            self._cv.notify()
        work = _c10d._create_work_from_future(work_fut)
        if not checked:
            return work
        return _CheckedWork(work, work_fut, source)

    def _complete_loop(self):
        done = ctypes.c_int(0)
        pause, idle_since = 0.0, time.monotonic()
        while True:
            with self._cv:
                if not self._pending and not self._closed:
                    self._cv.wait(_IDLE_EXIT_S)
                if not self._pending:
                    self._thread = None  # the next call starts a new one
                    return
                batch = list(self._pending)
            finished = []
            with self._lock:
                for entry in batch:
                    done.value = 0
                    status = N.lib.obc_test(entry[0], ctypes.byref(done))
                    if done.value:
                        finished.append((entry, status))
            if finished:
                with self._cv:
                    for entry, _ in finished:
                        self._pending.remove(entry)
                for entry, status in finished:
                    self._finish(entry, status)
                pause, idle_since = 0.0, time.monotonic()
                continue
            if time.monotonic() - idle_since < _POLL_SPIN_S:
                time.sleep(0)
            else:
                pause = min(_POLL_SLEEP_MAX_S, max(pause * 2, 20e-6))
                time.sleep(pause)

    def _finish(self, entry, status):
        _, fut, value, finish, _keep, caller = entry
        try:
            N.check(status, self._handle, "obc backend")
            if finish is not None:
                finish()
        except Exception as e:
            if caller is None:
                fut.set_exception(RuntimeError(str(e)))
                return
            _fail_cpp_caller(caller, str(e))
        fut.set_result(value)

    # -- collectives --------------------------------------------------------------
    def broadcast(self, tensors, opts=None):
        what = "broadcast"
        root = self._root(opts.rootRank if opts is not None else 0, what)
        b = self._bytes(tensors[opts.rootTensor if opts is not None else 0], what)
        return self._call(N.lib.obc_broadcast, N.lib.obc_ibroadcast,
                          (b.ptr, b.ptr, b.count, b.dtype, root), tensors, b.copy_back, b,
                          sys._getframe(1), what, _record(what, tensors))

    def allreduce(self, tensors, opts=None, _record_as=True):
        # The hot path of small calls and of DDP: the common case (a dense,
        # contiguous CPU tensor of a reducible dtype) is checked with the
        # cheapest attributes and called without staging. _record_as: the
        # profiler's record this call ends: True, its own; a coalesced call
        # (one record for all its calls) passes its record, or None.
        what = "all_reduce"
        if len(tensors) != 1:
            raise RuntimeError(f"obc backend: {what}: one tensor per process, got {len(tensors)}")
        t = tensors[0]
        rop = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        if t.layout is _SPARSE_COO:
            return self._sparse_allreduce(t, rop, what, tensors, _record_as)
        op = _OP_CODES.get(getattr(rop, "op", None))
        dtype = _REDUCIBLE.get(t.dtype)
        if (op is None or dtype is None or not t.is_cpu or t.layout is not _STRIDED or
                not t.is_contiguous()):
            b, op = self._reducible(t, rop, what)
            args, finish, keep = (b.ptr, b.ptr, b.count, b.dtype, op), b.copy_back, b
        else:
            ptr = t.data_ptr()
            args, finish, keep = (ptr, ptr, t.numel(), dtype, op), None, t
        frame = sys._getframe(1)
        record = _record(what, tensors) if _record_as is True else _record_as
        self._seq += 1
        if finish is None and record is None and _caller_waits(frame):
            with self._lock:
                status = N.lib.obc_allreduce(*args, self._handle)
            if status:
                N.check(status, self._handle, what)
            return self._done
        self._seq -= 1  # _call counts it
        return self._call(N.lib.obc_allreduce, N.lib.obc_iallreduce, args, tensors, finish,
                          keep, frame, what, record)

    def _sparse_allreduce(self, t, rop, what, tensors, record_as):
        """A sparse COO tensor, SUM only (as gloo): every rank's indices and
        values are gathered (padded to the largest count), then summed by
        coalescing them all, in the same order on every rank, so that every
        rank ends with the same tensor. Memory: every rank's entries."""
        if _op_code(rop, what) != N.SUM:
            raise RuntimeError(f"obc backend: {what} of a sparse tensor supports ReduceOp.SUM "
                               f"only (as gloo)")
        if t.device.type != "cpu":
            self._local_refusal(what, f"the tensor is on device '{t.device}'; obc moves CPU "
                                      f"memory only")
        record = _record(what, tensors) if record_as is True else record_as
        mine = t.coalesce()
        idx, val = mine.indices().contiguous(), mine.values().contiguous()
        # its own count of entries, then what every rank must agree on
        if t.dim() > _SPARSE_MAX_DIMS:
            raise RuntimeError(f"obc backend: {what}: a sparse tensor of {t.dim()} dimensions "
                               f"(obc takes up to {_SPARSE_MAX_DIMS})")
        sig = [idx.shape[1], t.sparse_dim(), t.dense_dim(), zlib.crc32(str(t.dtype).encode()),
               t.dim(), *t.shape] + [-1] * (_SPARSE_MAX_DIMS - t.dim())
        every = torch.empty(self._size * len(sig), dtype=torch.int64)
        self._blocking_allgather(torch.tensor(sig, dtype=torch.int64), every, what)
        every = every.view(self._size, len(sig))
        if not bool((every[:, 1:] == every[0, 1:]).all()):
            raise RuntimeError(f"obc backend: {what}: the ranks' sparse tensors differ in shape, "
                               f"sparse/dense dimensions or dtype")
        counts = every[:, 0].tolist()
        width = max(counts)
        pad_idx = torch.zeros((idx.shape[0], width), dtype=idx.dtype)
        pad_idx[:, :idx.shape[1]] = idx
        pad_val = torch.zeros((width,) + tuple(val.shape[1:]), dtype=val.dtype)
        pad_val[:val.shape[0]] = val
        all_idx = torch.empty((self._size,) + tuple(pad_idx.shape), dtype=idx.dtype)
        all_val = torch.empty((self._size,) + tuple(pad_val.shape), dtype=val.dtype)
        self._blocking_allgather(pad_idx, all_idx, what)
        self._blocking_allgather(pad_val, all_val, what)
        total = torch.sparse_coo_tensor(
            torch.cat([all_idx[r, :, :n] for r, n in enumerate(counts)], 1),
            torch.cat([all_val[r, :n] for r, n in enumerate(counts)], 0), t.shape).coalesce()
        t.copy_(total)
        return _done_work(tensors, record)

    def allreduce_coalesced(self, tensors, opts=None):
        if not tensors:
            return _done_work(tensors)
        # one record for the whole call, as gloo's one "all_reduce"; the last
        # call ends it (an unended record ends when dropped)
        record = _record("all_reduce", tensors)
        works = [self.allreduce([t], opts, None) for t in tensors[:-1]]
        works.append(self.allreduce(tensors[-1:], opts, record))
        for w in works[:-1]:
            w.wait()
        return works[-1]

    def reduce(self, tensors, opts=None):
        what = "reduce"
        root = self._root(opts.rootRank, what)
        b, op = self._reducible(tensors[opts.rootTensor], opts.reduceOp, what)
        return self._call(N.lib.obc_reduce, N.lib.obc_ireduce,
                          (b.ptr, b.ptr, b.count, b.dtype, op, root), tensors, b.copy_back, b,
                          sys._getframe(1), what, _record(what, tensors))

    def allgather(self, output_lists, inputs, opts=None, _record_as=True):
        what = "all_gather"
        if len(inputs) != 1 or len(output_lists) != 1:
            raise RuntimeError(f"obc backend: {what}: one tensor per process")
        outs, inp = output_lists[0], inputs[0]
        self._check_list(outs, inp, what)
        b = self._bytes(inp, what)
        staging = torch.empty(inp.numel() * self._size, dtype=inp.dtype)
        n = inp.numel()

        def finish():
            for r, o in enumerate(outs):
                o.copy_(staging[r * n:(r + 1) * n].view(o.shape))
        record = _record(what, inputs) if _record_as is True else _record_as
        return self._call(N.lib.obc_allgather, N.lib.obc_iallgather,
                          (b.ptr, staging.data_ptr(), b.count, b.dtype), output_lists, finish,
                          (b, staging), sys._getframe(1), what, record)

    def _allgather_base(self, output, input, opts=None):
        what = "all_gather_into_tensor"
        b = self._bytes(input, what)
        o = self._bytes(output, what)
        if output.dtype != input.dtype or o.count != b.count * self._size:
            raise RuntimeError(f"obc backend: {what}: the output ({output.numel()} x "
                               f"{output.dtype}) must hold {self._size} x the input "
                               f"({input.numel()} x {input.dtype})")
        return self._call(N.lib.obc_allgather, N.lib.obc_iallgather,
                          (b.ptr, o.ptr, b.count, b.dtype), [output], o.copy_back, (b, o),
                          sys._getframe(1), what, _record(what, [input]))

    def allgather_coalesced(self, output_lists, inputs, opts=None):
        # output_lists[r][i] receives rank r's inputs[i]
        if len(output_lists) != self._size:
            raise RuntimeError(f"obc backend: all_gather_coalesced: {len(output_lists)} output "
                               f"lists; it needs one per rank ({self._size})")
        record = _record("all_gather", inputs)  # one for the call, as for all_reduce
        for i, inp in enumerate(inputs):
            last = i == len(inputs) - 1
            self.allgather([[outs[i] for outs in output_lists]], [inp], None,
                           record if last else None).wait()
        return _done_work(output_lists)

    def reduce_scatter(self, outputs, input_lists, opts=None):
        what = "reduce_scatter"
        if len(outputs) != 1 or len(input_lists) != 1:
            raise RuntimeError(f"obc backend: {what}: one tensor per process")
        out, ins = outputs[0], input_lists[0]
        self._check_list(ins, out, what)
        o, op = self._reducible(out, opts.reduceOp, what)
        staging = torch.cat([t.reshape(-1) for t in ins]) if ins else out.new_empty(0)
        s, _ = self._reducible(staging, opts.reduceOp, what)
        return self._call(N.lib.obc_reduce_scatter, N.lib.obc_ireduce_scatter,
                          (s.ptr, o.ptr, o.count, o.dtype, op), outputs, o.copy_back, (s, o),
                          sys._getframe(1), what, _record(what, ins))

    def _reduce_scatter_base(self, output, input, opts=None):
        what = "reduce_scatter_tensor"
        o, op = self._reducible(output, opts.reduceOp, what)
        i, _ = self._reducible(input, opts.reduceOp, what)
        if output.dtype != input.dtype or i.count != o.count * self._size:
            raise RuntimeError(f"obc backend: {what}: the input ({input.numel()} x "
                               f"{input.dtype}) must hold {self._size} x the output "
                               f"({output.numel()} x {output.dtype})")
        return self._call(N.lib.obc_reduce_scatter, N.lib.obc_ireduce_scatter,
                          (i.ptr, o.ptr, o.count, o.dtype, op), [output], o.copy_back, (i, o),
                          sys._getframe(1), what, _record(what, [input]))

    def barrier(self, opts=None):
        return self._call(N.lib.obc_barrier, N.lib.obc_ibarrier, (), None, None, None,
                          sys._getframe(1), "barrier", _record("barrier", []))

    # -- personalised collectives ------------------------------------------------
    def gather(self, output_lists, inputs, opts):
        what = "gather"
        root = self._root(opts.rootRank, what)
        inp = inputs[0]
        b = self._bytes(inp, what)
        outs = output_lists[0] if output_lists else []
        if self._rank == root:
            self._check_list(outs, inp, what)
        elif outs:
            raise RuntimeError(f"obc backend: {what}: only the destination rank passes a "
                               f"gather_list")
        staging = torch.empty(inp.numel() * self._size if self._rank == root else 0,
                              dtype=inp.dtype)
        n = inp.numel()

        def finish():
            for r, o in enumerate(outs):
                o.copy_(staging[r * n:(r + 1) * n].view(o.shape))
        fn = _fn("obc_igather")
        if fn is None:  # emulated: every rank gathers everything
            staging = torch.empty(inp.numel() * self._size, dtype=inp.dtype)
            return self._call(N.lib.obc_allgather, N.lib.obc_iallgather,
                              (b.ptr, staging.data_ptr(), b.count, b.dtype), output_lists,
                              finish, (b, staging), sys._getframe(1), what, _record(what, inputs))
        return self._async(fn, (b.ptr, staging.data_ptr(), b.count, b.dtype, root),
                           output_lists, finish, (b, staging), what, _record(what, inputs))

    def scatter(self, outputs, input_lists, opts):
        what = "scatter"
        root = self._root(opts.rootRank, what)
        out = outputs[0]
        o = self._bytes(out, what)
        ins = input_lists[0] if input_lists else []
        if self._rank == root:
            self._check_list(ins, out, what)
            staging = torch.cat([t.reshape(-1) for t in ins]) if ins else out.new_empty(0)
        else:
            if ins:
                raise RuntimeError(f"obc backend: {what}: only the source rank passes a "
                                   f"scatter_list")
            staging = out.new_empty(0)
        n = out.numel()
        fn = _fn("obc_iscatter")
        if fn is None:  # emulated: the root broadcasts every block
            if self._rank != root:
                staging = torch.empty(n * self._size, dtype=out.dtype)
            s = self._bytes(staging, what)

            def finish():
                out.copy_(staging[self._rank * n:(self._rank + 1) * n].view(out.shape))
            return self._call(N.lib.obc_broadcast, N.lib.obc_ibroadcast,
                              (s.ptr, s.ptr, s.count, s.dtype, root), outputs, finish, (s, o),
                              sys._getframe(1), what, _record(what, ins))
        return self._async(fn, (staging.data_ptr(), o.ptr, o.count, o.dtype, root), outputs,
                           o.copy_back, (staging, o), what, _record(what, ins))

    def alltoall(self, output_list, input_list, opts=None):
        what = "all_to_all"
        if len(output_list) != self._size or len(input_list) != self._size:
            raise RuntimeError(f"obc backend: {what}: lists of {self._size} tensors needed")
        for t in list(output_list) + list(input_list):
            self._check_local(t, what)
        dtype = input_list[0].dtype
        if any(t.dtype != dtype for t in list(output_list) + list(input_list)):
            raise RuntimeError(f"obc backend: {what}: every tensor must have dtype {dtype}")
        inp = torch.cat([t.reshape(-1) for t in input_list])
        out = torch.empty(sum(t.numel() for t in output_list), dtype=dtype)
        in_splits = [t.numel() for t in input_list]
        out_splits = [t.numel() for t in output_list]

        def finish():
            at = 0
            for t in output_list:
                t.copy_(out[at:at + t.numel()].view(t.shape))
                at += t.numel()
        return self._alltoallv(out, inp, out_splits, in_splits, output_list, finish,
                               sys._getframe(1), what, input_list)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        what = "all_to_all_single"
        self._check_local(output, what)
        self._check_local(input, what)
        if output.dtype != input.dtype:
            raise RuntimeError(f"obc backend: {what}: input and output dtypes differ")
        row_out = output[0].numel() if output.dim() > 0 and output.shape[0] else 0
        row_in = input[0].numel() if input.dim() > 0 and input.shape[0] else 0
        if not output_split_sizes and not input_split_sizes:
            if input.numel() % self._size or output.numel() != input.numel():
                raise RuntimeError(f"obc backend: {what}: without splits the input "
                                   f"({input.numel()}) and output ({output.numel()}) must be "
                                   f"equal and divisible by {self._size}")
            in_splits = out_splits = [input.numel() // self._size] * self._size
        else:
            if input_split_sizes:
                in_splits = [s * row_in for s in input_split_sizes]
            else:
                in_splits = [input.numel() // self._size] * self._size
            if output_split_sizes:
                out_splits = [s * row_out for s in output_split_sizes]
            else:
                out_splits = [output.numel() // self._size] * self._size
        o = _Tensor(output, N.UINT8, True)
        i = _Tensor(input, N.UINT8, True)
        return self._alltoallv(o.t, i.t, out_splits, in_splits, [output], o.copy_back,
                               sys._getframe(1), what, [input], keep=(o, i))

    def _alltoallv(self, out, inp, out_splits, in_splits, value, finish, frame, what, inputs,
                   keep=None):
        """out/inp contiguous 1-D-able tensors of one dtype; splits in elements."""
        if len(out_splits) != self._size or len(in_splits) != self._size:
            raise RuntimeError(f"obc backend: {what}: {self._size} split sizes needed")
        esize = inp.element_size()
        fn = _fn("obc_ialltoallv")
        if fn is not None:
            arr = ctypes.c_size_t * self._size

            def displs(splits):
                d, at = [], 0
                for s in splits:
                    d.append(at)
                    at += s
                return arr(*[x * esize for x in d])
            sc, rc = arr(*[s * esize for s in in_splits]), arr(*[s * esize for s in out_splits])
            sd, rd = displs(in_splits), displs(out_splits)
            return self._async(fn, (inp.data_ptr(), sc, sd, out.data_ptr(), rc, rd, N.UINT8),
                               value, finish, (out, inp, sc, sd, rc, rd, keep), what,
                               _record(what, inputs))
        # Emulated: every rank's input padded to the longest, all gathered.
        counts = torch.tensor(in_splits, dtype=torch.int64)
        every = torch.empty(self._size * self._size, dtype=torch.int64)
        self._blocking_allgather(counts, every, what)
        every = every.view(self._size, self._size)  # [src][dst] elements
        width = int(every.sum(1).max()) * esize
        mine = torch.zeros(width, dtype=torch.uint8)
        flat_in = inp.reshape(-1).view(torch.uint8) if inp.numel() else mine[:0]
        mine[:flat_in.numel()] = flat_in
        whole = torch.empty(width * self._size, dtype=torch.uint8)
        self._blocking_allgather(mine, whole, what)
        flat_out = out.reshape(-1).view(torch.uint8) if out.numel() else None
        at = 0
        for src in range(self._size):
            start = int(every[src, :self._rank].sum()) * esize
            nbytes = int(every[src, self._rank]) * esize
            if nbytes != out_splits[src] * esize:
                self._local_refusal(what, f"rank {src} sends {every[src, self._rank]} "
                                          f"elements here, the output split says "
                                          f"{out_splits[src]}")
            if nbytes:
                flat_out[at:at + nbytes] = whole[src * width + start:src * width + start + nbytes]
            at += nbytes
        finish()
        return _done_work(value)

    def _blocking_allgather(self, inp, out, what):
        with self._lock:
            status = N.lib.obc_allgather(inp.data_ptr(), out.data_ptr(),
                                         inp.numel() * inp.element_size(), N.UINT8,
                                         self._handle)
        N.check(status, self._handle, what)

    # -- point-to-point ----------------------------------------------------------
    # tag: compared, not reordered (docs/p2p.md, "Tags"): a pair's messages
    # are received in send order; a receive whose tag is not its sender's
    # next message's fails on both ranks instead of taking the wrong data.
    def send(self, tensors, dst, tag=0):
        return self._p2p("send", tensors, dst, tag)

    def recv(self, tensors, src, tag=0):
        return self._p2p("recv", tensors, src, tag)

    def recv_anysource(self, tensors, tag=0):
        what = "recvAnySource"  # torch's name for it (gloo's record: gloo:recvAnySource)
        fn = self._p2p_fn("obc_irecv_tag", "recv from any source")
        b = self._bytes(tensors[0], what)
        source = _int(-1)
        return self._async(fn, (b.ptr, b.count, b.dtype, _ANY_SOURCE, tag, ctypes.byref(source)),
                           tensors, b.copy_back, (b, source), what, _record(what, tensors),
                           source)

    def _p2p(self, what, tensors, peer, tag):
        if what == "send":
            fn, extra = self._p2p_fn("obc_isend_tag", what), ()
        else:
            fn, extra = self._p2p_fn("obc_irecv_tag", what), (None,)
        b = self._bytes(tensors[0], what)
        if not 0 <= peer < self._size or peer == self._rank:
            raise RuntimeError(f"obc backend: {what}: peer {peer} is not another rank of this "
                               f"group (0..{self._size - 1}, this is {self._rank})")
        return self._async(fn, (b.ptr, b.count, b.dtype, peer, tag) + extra, tensors,
                           b.copy_back, b, what, _record(what, tensors))

    @staticmethod
    def _p2p_fn(name, what):
        fn = _fn(name)
        if fn is None:
            raise RuntimeError(f"obc backend: {what} needs {name} (obc point-to-point), which "
                               f"this libobc ({N.path}) does not have")
        return fn

    # -- checks ------------------------------------------------------------------
    def _check_list(self, tensors, like, what):
        if len(tensors) != self._size:
            raise RuntimeError(f"obc backend: {what}: the list has {len(tensors)} tensors; it "
                               f"needs one per rank ({self._size})")
        for t in tensors:
            self._check_local(t, what)
            if t.dtype != like.dtype or t.numel() != like.numel():
                raise RuntimeError(f"obc backend: {what}: list entries must be {like.numel()} "
                                   f"x {like.dtype}, got {t.numel()} x {t.dtype}")


class _CheckedWork(_c10d.Work):
    """The Work that torch's Python functions get. The Work made from a
    Future (inner) returns True from wait() even when the Future holds the
    call's error, so a failed isend, irecv or async collective would look
    done; this one's wait() raises it. A Python subclass is never called
    from C++, so C++ callers get inner itself (_enqueue). A receive from any
    source also reports its sender here (_source_rank(), which torch's recv
    and irecv call from Python)."""

    def __init__(self, inner, fut, source=None):
        super().__init__()
        self._inner, self._fut, self._source = inner, fut, source

    def wait(self, timeout=None):
        done = self._inner.wait() if timeout is None else self._inner.wait(timeout)
        self._fut.value()  # raises the call's error, if it failed
        return done

    def is_completed(self):
        return self._inner.is_completed()

    def is_success(self):
        return self._inner.is_success()

    def exception(self):
        return self._inner.exception()

    def get_future(self):
        return self._inner.get_future()

    def result(self):
        return self._inner.result()

    def _source_rank(self):
        if self._source is None:
            raise RuntimeError("obc backend: _source_rank() of a Work that is not a receive "
                               "from any source")
        self.wait()
        return self._source.value


class _ComplexView(_Tensor):
    """A complex tensor reduced as its float parts (SUM and AVG are
    elementwise on the parts; PRODUCT, MIN and MAX are not)."""
    __slots__ = ()

    def __init__(self, t):
        real = _COMPLEX[t.dtype]
        _Tensor.__init__(self, t, _REDUCIBLE[real], False)
        self.count *= 2


_live = weakref.WeakSet()


@atexit.register
def _shutdown_all():
    """Destroy the groups' communicators before the interpreter (and libobc)
    goes away; torch never destroys a group it is not asked to."""
    for pg in list(_live):
        try:
            pg.shutdown()
        except Exception:
            pass


def _default_pg_timeout():
    return getattr(dist, "default_pg_timeout", datetime.timedelta(minutes=30))


def _create(store, rank, size, timeout):
    """torch's creator: called on the members of each new group (the
    default one, then every new_group) with the group's own store."""
    return ObcProcessGroup(store, rank, size, timeout)


def _register():
    """Register "obc" once (register_backend refuses a name twice). torch
    1.13 stores the name as Backend.OBC = "OBC" while get_backend() reads
    "obc": set the attribute to the lower-case name so that
    dist.get_backend() == dist.Backend.OBC holds, as it does for gloo."""
    if NAME.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(NAME, _create)
    setattr(dist.Backend, NAME.upper(), NAME)


_register()
