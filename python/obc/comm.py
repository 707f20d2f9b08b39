# SPDX-License-Identifier: MIT
"""Communicator and Work: the collectives of include/obc.h on NumPy arrays
and CPU torch tensors, in place and zero-copy, shaped like
torch.distributed (src/dst, op=ReduceOp.SUM, async_op=True -> Work)."""
import ctypes
import enum
import operator
import threading
import weakref
from contextlib import contextmanager

from . import _buffers as B
from . import _native as N


class ReduceOp(enum.IntEnum):
    SUM = N.SUM
    PRODUCT = N.PROD
    MIN = N.MIN
    MAX = N.MAX
    AVG = N.AVG  # integers truncate toward zero, as in obc.h
    PROD = N.PROD  # obc's own name, an alias of PRODUCT


def get_unique_id():
    """A fresh bootstrap id (bytes) for Communicator(rank=, size=,
    unique_id=): make it on one process, send it to the others."""
    raw = ctypes.create_string_buffer(N.UNIQUE_ID_BYTES)
    N.check(N.lib.obc_get_unique_id(raw), None, "get_unique_id")
    return raw.raw


class Work:
    """The handle of a call made with async_op=True, as torch's Work:
    wait() blocks until it is done (raising its error), is_completed()
    polls. The buffers stay referenced until then. Dropping an unfinished
    Work waits for it, since obc is still writing its buffers."""

    def __init__(self, comm, request, keep, finish=None):
        self._comm = comm
        self._req = request  # ctypes.c_void_p, None once released
        self._keep = keep
        self._finish = finish
        self._error = None
        self._lock = threading.Lock()

    def _complete(self, status):
        self._req = None
        try:
            N.check(status, self._comm._handle)
            if self._finish is not None:
                self._finish()
        except Exception as e:  # kept for every later wait()
            self._error = e
        self._keep = self._finish = None

    def wait(self, timeout=None):
        """Block until the operation is done; raise its error if it failed.
        Returns True, as torch's Work.wait(). (timeout is accepted for
        torch compatibility; obc's own OBC_TIMEOUT bounds the wait.)"""
        with self._lock:
            if self._req is not None:
                self._complete(N.lib.obc_wait(self._req))
        if self._error is not None:
            raise self._error
        return True

    def is_completed(self):
        """True once the operation has finished (successfully or not)."""
        with self._lock:
            if self._req is not None:
                done = ctypes.c_int(0)
                status = N.lib.obc_test(self._req, ctypes.byref(done))
                if done.value:
                    self._complete(status)
            return self._req is None

    def is_success(self):
        return self.is_completed() and self._error is None

    def exception(self):
        return self._error

    def __del__(self):
        if getattr(self, "_req", None) is not None:
            try:
                N.lib.obc_wait(self._req)
            except Exception:  # interpreter shutdown: the library may be gone already
                pass


class Communicator:
    """A group of ranks. Communicator() joins the job described by the
    environment (obcrun's, torchrun's, mpirun's or srun's variables, like
    obc_comm_init_env);
    Communicator(rank=r, size=n, unique_id=uid) joins an explicit one.
    Use it as a context manager, or call destroy()."""

    def __init__(self, *, rank=None, size=None, unique_id=None, timeout=None):
        handle = ctypes.c_void_p()
        if unique_id is None:
            if rank is not None or size is not None:
                raise ValueError("Communicator: rank and size go with unique_id")
            N.check(N.lib.obc_comm_init_env(ctypes.byref(handle)), None, "obc init")
        else:
            if rank is None or size is None:
                raise ValueError("Communicator: unique_id needs rank and size")
            if len(unique_id) != N.UNIQUE_ID_BYTES:
                raise ValueError(f"Communicator: unique_id must be {N.UNIQUE_ID_BYTES} bytes "
                                 f"(from obc.get_unique_id()), got {len(unique_id)}")
            N.check(N.lib.obc_comm_init_rank(ctypes.byref(handle), size, bytes(unique_id), rank),
                    None, "obc init")
        self._handle = handle
        self.rank = N.lib.obc_comm_rank(handle)
        self.size = N.lib.obc_comm_size(handle)
        if timeout is not None:
            self.set_timeout(timeout)

    # -- life cycle --------------------------------------------------------
    def _h(self):
        if self._handle is None:
            raise ValueError("obc: the communicator was destroyed")
        return self._handle

    def destroy(self):
        """Free the communicator (after this rank's queued operations)."""
        if self._handle is not None:
            handle, self._handle = self._handle, None
            N.check(N.lib.obc_comm_destroy(handle), None, "destroy")

    def abort(self):
        """Fail every pending and later operation here and on every peer."""
        N.check(N.lib.obc_comm_abort(self._h()), self._handle, "abort")

    def set_timeout(self, seconds):
        N.check(N.lib.obc_comm_set_timeout(self._h(), float(seconds)), self._handle, "timeout")

    def last_error(self):
        return N.last_error(self._handle) if self._handle is not None else ""

    # -- sub-communicators -------------------------------------------------
    @classmethod
    def _adopt(cls, handle):
        """A Communicator around a handle the library made (split, dup)."""
        self = cls.__new__(cls)
        self._handle = handle
        self.rank = N.lib.obc_comm_rank(handle)
        self.size = N.lib.obc_comm_size(handle)
        return self

    def split(self, color, key=0):
        """Collective over this communicator (as obc_comm_split): the ranks
        that pass the same color (an int >= 0) form a new Communicator,
        ranked by (key, rank here); color None or obc.UNDEFINED joins none
        and returns None. The new one is independent: its own timeout
        (this one's, as set now) and failure domain; destroy it on its
        own, before or after this one."""
        if color is None:
            color = N.UNDEFINED
        try:
            color, key = operator.index(color), operator.index(key)
        except TypeError:
            raise TypeError(f"split: color and key must be ints, not {color!r} and {key!r}") \
                from None
        if not -2**31 <= key < 2**31 or color >= 2**31:
            raise ValueError(f"split: color {color} or key {key} does not fit a C int")
        if color < 0 and color != N.UNDEFINED:
            raise ValueError(f"split: color {color} is negative (use None or obc.UNDEFINED "
                             f"to join no new communicator)")
        handle = ctypes.c_void_p()
        N.check(N.lib.obc_comm_split(self._h(), color, key, ctypes.byref(handle)),
                self._handle, "split")
        return Communicator._adopt(handle) if handle.value else None

    def dup(self):
        """A new Communicator over the same ranks in the same order
        (collective, as obc_comm_dup)."""
        handle = ctypes.c_void_p()
        N.check(N.lib.obc_comm_dup(self._h(), ctypes.byref(handle)), self._handle, "dup")
        return Communicator._adopt(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()

    def __repr__(self):
        state = "destroyed" if self._handle is None else f"rank {self.rank} of {self.size}"
        return f"<obc.Communicator {state}>"

    # -- plumbing ----------------------------------------------------------
    def _run(self, blocking, nonblocking, args, keep, async_op, finish=None, what=None):
        """Call the blocking C function, or the non-blocking one and wrap
        its request in a Work. Buffers in keep stay alive until done."""
        if not async_op:
            if finish is not None and _group_depth.n > 0:
                raise ValueError(f"{what}: a list output needs the result at once, which a "
                                 f"group defers; pass one output tensor, or async_op=True")
            N.check(blocking(*args, self._h()), self._handle, what)
            if finish is not None:
                finish()
            return None
        req = ctypes.c_void_p()
        N.check(nonblocking(*args, self._h(), ctypes.byref(req)), self._handle, what)
        return Work(self, req, keep, finish)

    def _root(self, root, what):
        if not isinstance(root, int) or not 0 <= root < self.size:
            raise ValueError(f"{what}: rank {root!r} is not a rank of this communicator "
                             f"(0..{self.size - 1})")
        return root

    # -- collectives -------------------------------------------------------
    def broadcast(self, tensor, src=0, async_op=False, wire_dtype=None):
        """tensor (in place) receives src's tensor on every rank.

        wire_dtype (torch.bfloat16, torch.float16, np.float16 or the names
        "bfloat16"/"float16"): a float32 tensor travels in that dtype
        (obc_broadcast_as: half the bytes) and every rank, src included,
        ends with src's values rounded once to it (nearest even) and
        widened back, bit-identical. Blocking only (async_op=True is a
        ValueError with a wire_dtype other than the tensor's)."""
        what = "broadcast"
        src = self._root(src, what)
        if wire_dtype is not None:
            return self._broadcast_as(tensor, src, async_op, wire_dtype, what)
        buf = B.as_buffer(tensor, what, writable=self.rank != src, any_dtype=True)
        return self._run(N.lib.obc_broadcast, N.lib.obc_ibroadcast,
                         (buf.ptr, buf.ptr, buf.count, buf.dtype, src), buf, async_op, what=what)

    def _broadcast_as(self, tensor, src, async_op, wire_dtype, what):
        buf = B.as_buffer(tensor, what, writable=True)
        wire = B.obc_dtype(wire_dtype, what)
        if wire == buf.dtype:
            return self.broadcast(tensor, src, async_op)
        if async_op:
            raise ValueError(f"{what}: wire_dtype= is blocking only (its conversion runs in "
                             f"the calling thread); pass async_op=False")
        N.check(N.lib.obc_broadcast_as(buf.ptr, buf.ptr, buf.count, buf.dtype, wire, src,
                                       self._h()), self._handle, what)
        return None

    # -- shared buffers ----------------------------------------------------
    def empty(self, shape, dtype=None, like=None):
        """An uninitialised (in fact zero-filled) array of shape and dtype
        in obc_mem_alloc memory, which the other ranks of this host can map:
        a NumPy array, or a torch tensor when like is torch, a torch tensor
        or dtype is a torch dtype. Freed when the array (and every view of
        it) is gone, or at the latest when this communicator is destroyed;
        it must not be used after that."""
        import numpy as np
        what = "empty"
        torch = _torch_wanted(like, dtype)
        if dtype is None:
            dtype = torch.float32 if torch is not None else np.float32
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        count = 1
        for n in shape:
            count *= int(n)
        code = B.obc_dtype(dtype, what)
        esize = N.lib.obc_dtype_size(code)
        elem = B.torch_dtype(code) if torch is not None else B.numpy_dtype(code)
        if elem is None:
            raise TypeError(f"{what}: NumPy has no {dtype!r}; pass like=torch for a tensor")
        nbytes = count * esize
        if nbytes == 0:
            raw = np.empty(0, dtype=np.uint8)
        else:
            ptr = ctypes.c_void_p()
            N.check(N.lib.obc_mem_alloc(ctypes.byref(ptr), nbytes, self._h()), self._handle,
                    what)
            block = (ctypes.c_char * nbytes).from_address(ptr.value)
            fin = weakref.finalize(block, _mem_free, self, ptr.value)
            fin.atexit = False  # at exit the communicator's destroy frees it
            raw = np.frombuffer(block, dtype=np.uint8)
        if torch is not None:
            return torch.from_numpy(raw).view(elem).reshape(shape)
        return raw.view(elem).reshape(shape)

    def all_reduce(self, tensor, op=ReduceOp.SUM, async_op=False):
        """tensor (in place) = op over every rank's tensor."""
        what = "all_reduce"
        buf = B.as_buffer(tensor, what)
        return self._run(N.lib.obc_allreduce, N.lib.obc_iallreduce,
                         (buf.ptr, buf.ptr, buf.count, buf.dtype, _op(op, what)), buf, async_op,
                         what=what)

    def reduce(self, tensor, dst=0, op=ReduceOp.SUM, async_op=False):
        """dst's tensor (in place) = op over every rank's tensor; the
        others' tensors are only read."""
        what = "reduce"
        dst = self._root(dst, what)
        buf = B.as_buffer(tensor, what, writable=self.rank == dst)
        return self._run(N.lib.obc_reduce, N.lib.obc_ireduce,
                         (buf.ptr, buf.ptr, buf.count, buf.dtype, _op(op, what), dst), buf,
                         async_op, what=what)

    def all_gather(self, output, tensor, async_op=False):
        """output receives every rank's tensor in rank order. output is a
        list of size tensors shaped like tensor, or one tensor/array of
        size * tensor.numel() elements (as all_gather_into_tensor)."""
        what = "all_gather"
        inp = B.as_buffer(tensor, what, writable=False, any_dtype=True)
        if isinstance(output, (list, tuple)):
            self._check_list(output, tensor, what)
            staging = B.empty_like(tensor, _numel(tensor) * self.size)
            out = B.as_buffer(staging, what, any_dtype=True)

            def finish():
                whole = B.flat(staging)
                n = _numel(tensor)
                for r, t in enumerate(output):
                    B.flat(t)[:] = whole[r * n:(r + 1) * n]
            keep = (inp, out, output)
        else:
            B.same_type(output, tensor, what)
            out = B.as_buffer(output, what, any_dtype=True)
            if out.nbytes != inp.nbytes * self.size:
                raise ValueError(f"{what}: output has {_numel(output)} elements; it needs "
                                 f"{self.size} x {_numel(tensor)}")
            finish, keep = None, (inp, out)
        return self._run(N.lib.obc_allgather, N.lib.obc_iallgather,
                         (inp.ptr, out.ptr, inp.count, inp.dtype), keep, async_op, finish, what)

    def reduce_scatter(self, output, input, op=ReduceOp.SUM, async_op=False):
        """output = op over every rank of block `rank` of input. input is a
        list of size tensors shaped like output, or one tensor/array of
        size * output.numel() elements."""
        what = "reduce_scatter"
        out = B.as_buffer(output, what)
        if isinstance(input, (list, tuple)):
            self._check_list(input, output, what)
            staging = B.empty_like(output, _numel(output) * self.size)
            whole, n = B.flat(staging), _numel(output)
            for r, t in enumerate(input):
                whole[r * n:(r + 1) * n] = B.flat(t)
            inp = B.as_buffer(staging, what)
        else:
            B.same_type(output, input, what)
            inp = B.as_buffer(input, what, writable=False)
            if inp.count != out.count * self.size:
                raise ValueError(f"{what}: input has {inp.count} elements; it needs "
                                 f"{self.size} x {out.count}")
        return self._run(N.lib.obc_reduce_scatter, N.lib.obc_ireduce_scatter,
                         (inp.ptr, out.ptr, out.count, out.dtype, _op(op, what)), (inp, out),
                         async_op, what=what)

    def barrier(self, async_op=False):
        return self._run(N.lib.obc_barrier, N.lib.obc_ibarrier, (), None, async_op,
                         what="barrier")

    # -- point-to-point (docs/p2p.md) ---------------------------------------
    def send(self, tensor, dst):
        """Send tensor to rank dst; returns when tensor may be reused. Matched
        in order with dst's recv from this rank; count and dtype must agree
        (else obc.Mismatch on both ranks). Inside obc.group(), the group's
        sends and receives progress together."""
        return self._p2p(N.lib.obc_send, N.lib.obc_isend, tensor, dst, False, "send")

    def recv(self, tensor, src):
        """Receive into tensor (in place) the next message from rank src."""
        return self._p2p(N.lib.obc_recv, N.lib.obc_irecv, tensor, src, True, "recv")

    def isend(self, tensor, dst):
        """send, returning a Work at once."""
        return self._p2p(N.lib.obc_send, N.lib.obc_isend, tensor, dst, False, "isend", True)

    def irecv(self, tensor, src):
        """recv, returning a Work at once."""
        return self._p2p(N.lib.obc_recv, N.lib.obc_irecv, tensor, src, True, "irecv", True)

    def _p2p(self, blocking, nonblocking, tensor, peer, writable, what, async_op=False):
        peer = self._root(peer, what)
        buf = B.as_buffer(tensor, what, writable=writable, any_dtype=True)
        return self._run(blocking, nonblocking, (buf.ptr, buf.count, buf.dtype, peer), buf,
                         async_op, what=what)

    def synchronize(self):
        """Wait for every operation this rank started on the communicator."""
        N.check(N.lib.obc_comm_synchronize(self._h()), self._handle, "synchronize")

    def check_buffer(self, tensor, src=0):
        """obc_check_consistency on one buffer: (ndiff, first_diff_rank),
        the number of ranks whose bytes differ from src's and the lowest
        of them (-1 if none). The same answer on every rank."""
        what = "check_buffer"
        src = self._root(src, what)
        buf = B.as_buffer(tensor, what, writable=False, any_dtype=True)
        ndiff, first = ctypes.c_int(), ctypes.c_int()
        N.check(N.lib.obc_check_consistency(buf.ptr, buf.nbytes, src, ctypes.byref(ndiff),
                                            ctypes.byref(first), self._h()), self._handle, what)
        return ndiff.value, first.value

    def _check_list(self, tensors, like, what):
        if len(tensors) != self.size:
            raise ValueError(f"{what}: the list has {len(tensors)} tensors; it needs one per "
                             f"rank ({self.size})")
        for t in tensors:
            B.same_type(t, like, what)
            if tuple(t.shape) != tuple(like.shape):
                raise ValueError(f"{what}: list entries must be shaped {tuple(like.shape)}, "
                                 f"got {tuple(t.shape)}")


def _mem_free(comm, ptr):
    """A shared block's finaliser: free it unless its communicator is gone
    (obc_comm_destroy freed it then)."""
    if comm._handle is not None:
        N.lib.obc_mem_free(ptr, comm._handle)


def _torch_wanted(like, dtype):
    """The torch module when empty() should return a tensor, else None."""
    import sys
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    if like is torch or isinstance(like, torch.Tensor) or isinstance(dtype, torch.dtype):
        return torch
    return None


def _numel(t):
    return t.numel() if B.is_tensor(t) else t.size


def _op(op, what):
    try:
        return int(ReduceOp(op))
    except ValueError:
        raise ValueError(f"{what}: {op!r} is not an obc.ReduceOp") from None


def hash_buffer(tensor):
    """obc_hash64 of the buffer's bytes (what check_buffer compares)."""
    buf = B.as_buffer(tensor, "hash", writable=False, any_dtype=True)
    return N.lib.obc_hash64(buf.ptr, buf.nbytes)


@contextmanager
def group():
    """Queue this thread's collectives and launch them together at the end
    (obc_group_start/end): small broadcasts with one root are fused into
    few transfers, with no packing copy. Blocking calls inside return at
    once; the end of the block waits for them."""
    N.check(N.lib.obc_group_start(), None, "group")
    _group_depth.n += 1
    try:
        yield
    finally:
        _group_depth.n -= 1
        N.check(N.lib.obc_group_end(), None, "group")


class _Depth(threading.local):
    n = 0


_group_depth = _Depth()
