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


ANY_SOURCE = -2  # OBC_ANY_SOURCE of obc.h


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
        self._source = None  # irecv: the sender's rank, or a ctypes.c_int obc fills in

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

    def source_rank(self):
        """The rank an irecv received from (waits for it first): the named
        one, or with src=None whichever rank sent. As torch's
        Work._source_rank()."""
        if self._source is None:
            raise ValueError("source_rank: this Work is not a receive")
        self.wait()
        src = self._source
        return src.value if isinstance(src, ctypes.c_int) else src

    _source_rank = source_rank

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

    @classmethod
    def from_store(cls, store, rank, size, key, timeout=None):
        """Join through a key-value store every rank reaches (torch's
        TCPStore, FileStore, a process group's store): rank 0 puts a fresh
        unique id under key, the others wait for it. The key is deleted once
        every rank has joined, so a later join on the same store and key
        cannot find a finished rendezvous's id."""
        if rank == 0:
            store.set(key, get_unique_id())
        uid = store.get(key)
        comm = cls(rank=rank, size=size, unique_id=bytes(uid), timeout=timeout)
        # Every rank has read the key once the communicator exists (joining
        # needs all of them); the barrier keeps them here until it is gone.
        if rank == 0:
            try:
                store.delete_key(key)
            except (RuntimeError, AttributeError):  # a store that cannot delete keys
                pass
        comm.barrier()
        return comm

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

    # -- personalised collectives (obc_gather, obc_scatter, obc_alltoall[v]) --
    def gather(self, tensor, gather_list=None, dst=0, async_op=False):
        """dst receives every rank's tensor in rank order: gather_list is a
        list of size tensors shaped like tensor, or one tensor/array of
        size * tensor.numel() elements, on dst only (None elsewhere, as in
        torch.distributed)."""
        what = "gather"
        dst = self._root(dst, what)
        inp = B.as_buffer(tensor, what, writable=False, any_dtype=True)
        finish, out_ptr, keep = None, None, (inp,)
        if self.rank == dst:
            if gather_list is None:
                raise ValueError(f"{what}: the destination rank {dst} needs gather_list (a list "
                                 f"of {self.size} tensors, or one of {self.size} x "
                                 f"{_numel(tensor)} elements)")
            out, finish = self._list_or_whole(gather_list, tensor, what, copy_in=False)
            out_ptr, keep = out.ptr, (inp, out, gather_list)
        elif not _absent(gather_list):
            raise ValueError(f"{what}: gather_list must be None on rank {self.rank}, which is not "
                             f"the destination ({dst})")
        return self._run(N.lib.obc_gather, N.lib.obc_igather,
                         (inp.ptr, out_ptr, inp.count, inp.dtype, dst), keep, async_op, finish,
                         what)

    def scatter(self, tensor, scatter_list=None, src=0, async_op=False):
        """tensor (in place) receives entry `rank` of src's scatter_list (a
        list of size tensors shaped like tensor, or one tensor/array of
        size * tensor.numel() elements; None on the other ranks)."""
        what = "scatter"
        src = self._root(src, what)
        out = B.as_buffer(tensor, what, any_dtype=True)
        in_ptr, keep = None, (out,)
        if self.rank == src:
            if scatter_list is None:
                raise ValueError(f"{what}: the source rank {src} needs scatter_list (a list of "
                                 f"{self.size} tensors, or one of {self.size} x "
                                 f"{_numel(tensor)} elements)")
            inp, _ = self._list_or_whole(scatter_list, tensor, what, copy_in=True)
            in_ptr, keep = inp.ptr, (inp, out, scatter_list)
        elif not _absent(scatter_list):
            raise ValueError(f"{what}: scatter_list must be None on rank {self.rank}, which is "
                             f"not the source ({src})")
        return self._run(N.lib.obc_scatter, N.lib.obc_iscatter,
                         (in_ptr, out.ptr, out.count, out.dtype, src), keep, async_op, what=what)

    def all_to_all(self, output_tensor_list, input_tensor_list, async_op=False):
        """input_tensor_list[j] goes to rank j, output_tensor_list[j] comes
        from rank j (size tensors each, one dtype; sizes may differ per
        peer, and must agree with the peer's: else obc.Mismatch)."""
        what = "all_to_all"
        outs, ins = list(output_tensor_list), list(input_tensor_list)
        for name, lst in (("output_tensor_list", outs), ("input_tensor_list", ins)):
            if len(lst) != self.size:
                raise ValueError(f"{what}: {name} has {len(lst)} tensors; it needs one per rank "
                                 f"({self.size})")
        for t in outs + ins:
            B.same_type(t, ins[0], what)
        # Pack into one buffer each way (alltoallv's layout), unpack after.
        sc = [_numel(t) for t in ins]
        rc = [_numel(t) for t in outs]
        send = B.empty_like(ins[0], sum(sc))
        recv = B.empty_like(ins[0], sum(rc))
        whole, at = B.flat(send), 0
        for t, n in zip(ins, sc):
            whole[at:at + n] = B.flat(t)
            at += n
        sb = B.as_buffer(send, what, any_dtype=True)
        rb = B.as_buffer(recv, what, any_dtype=True)
        unit = sb.count // sum(sc) if sum(sc) else rb.count // sum(rc) if sum(rc) else 1

        def finish():
            flat, pos = B.flat(recv), 0
            for t, n in zip(outs, rc):
                B.flat(t)[:] = flat[pos:pos + n]
                pos += n
        args = (sb.ptr,) + _counts(sc, unit) + (rb.ptr,) + _counts(rc, unit) + (sb.dtype,)
        return self._run(N.lib.obc_alltoallv, N.lib.obc_ialltoallv, args,
                         (sb, rb, outs, ins), async_op, finish, what)

    def all_to_all_single(self, output, input, out_splits=None, in_splits=None, async_op=False,
                          *, output_split_sizes=None, input_split_sizes=None):
        """Rows (first-dimension slices) of input go to the ranks in order:
        in_splits[j] rows to rank j, out_splits[j] rows from rank j land in
        output in rank order; None means equal splits (the first dimension
        divided by size). output_split_sizes/input_split_sizes are
        torch.distributed's names for the same. Zero-copy; output may be
        input with equal splits (obc_alltoall in place)."""
        what = "all_to_all_single"
        out_splits = out_splits if out_splits is not None else output_split_sizes
        in_splits = in_splits if in_splits is not None else input_split_sizes
        B.same_type(output, input, what)
        for name, t in (("output", output), ("input", input)):
            if len(t.shape) == 0:
                raise ValueError(f"{what}: {name} is 0-dimensional; splits count rows of the "
                                 f"first dimension")
        if tuple(output.shape[1:]) != tuple(input.shape[1:]):
            raise ValueError(f"{what}: output rows {tuple(output.shape[1:])} and input rows "
                             f"{tuple(input.shape[1:])} differ in shape")
        ob = B.as_buffer(output, what, any_dtype=True)
        ib = B.as_buffer(input, what, writable=False, any_dtype=True)
        row = 1
        for n in input.shape[1:]:
            row *= int(n)
        row *= ib.count // _numel(input) if _numel(input) else \
            ob.count // _numel(output) if _numel(output) else 1
        sin = self._splits(in_splits, input.shape[0], "in_splits", what)
        sout = self._splits(out_splits, output.shape[0], "out_splits", what)
        if in_splits is None and out_splits is None and sin == sout:
            return self._run(N.lib.obc_alltoall, N.lib.obc_ialltoall,
                             (ib.ptr, ob.ptr, sin[0] * row, ib.dtype), (ib, ob), async_op,
                             what=what)
        if ib.ptr == ob.ptr and ib.nbytes > 0:  # alltoallv has no in-place form
            ib = B.as_buffer(B.flat(input).clone() if B.is_tensor(input) else input.copy(),
                             what, writable=False, any_dtype=True)
        args = (ib.ptr,) + _counts(sin, row) + (ob.ptr,) + _counts(sout, row) + (ib.dtype,)
        return self._run(N.lib.obc_alltoallv, N.lib.obc_ialltoallv, args, (ib, ob), async_op,
                         what=what)

    def _splits(self, splits, rows, name, what):
        rows = int(rows)
        if splits is None:
            if rows % self.size:
                raise ValueError(f"{what}: {rows} rows do not split equally over {self.size} "
                                 f"ranks; pass {name}")
            return [rows // self.size] * self.size
        try:
            got = [int(x) for x in splits]
        except (TypeError, ValueError):
            raise TypeError(f"{what}: {name} must be a sequence of {self.size} row counts, got "
                            f"{splits!r}") from None
        if len(got) != self.size:
            raise ValueError(f"{what}: {name} has {len(got)} entries; it needs one per rank "
                             f"({self.size})")
        if min(got) < 0 or sum(got) != rows:
            raise ValueError(f"{what}: {name} {got} must be non-negative and sum to the first "
                             f"dimension ({rows})")
        return got

    def _list_or_whole(self, bufs, like, what, copy_in):
        """The rooted calls' list side: a list of size tensors shaped like
        `like` through a staging buffer (filled now when copy_in, else copied
        out by the returned finish), or one tensor of size x like's elements
        used directly (finish None)."""
        n = _numel(like)
        if isinstance(bufs, (list, tuple)):
            self._check_list(bufs, like, what)
            staging = B.empty_like(like, n * self.size)
            whole = B.flat(staging)
            if copy_in:
                for r, t in enumerate(bufs):
                    whole[r * n:(r + 1) * n] = B.flat(t)
                return B.as_buffer(staging, what, writable=False, any_dtype=True), None

            def finish():
                for r, t in enumerate(bufs):
                    B.flat(t)[:] = whole[r * n:(r + 1) * n]
            return B.as_buffer(staging, what, any_dtype=True), finish
        B.same_type(bufs, like, what)
        buf = B.as_buffer(bufs, what, writable=not copy_in, any_dtype=True)
        if _numel(bufs) != n * self.size:
            raise ValueError(f"{what}: the tensor has {_numel(bufs)} elements; it needs "
                             f"{self.size} x {n}")
        return buf, None

    def barrier(self, async_op=False):
        return self._run(N.lib.obc_barrier, N.lib.obc_ibarrier, (), None, async_op,
                         what="barrier")

    # -- point-to-point (docs/p2p.md) ---------------------------------------
    # tag: compared, not reordered (docs/p2p.md, "Tags"): a pair's messages
    # are received in send order, and a receive whose tag is not its
    # sender's next message's is obc.Mismatch on both ranks.
    def send(self, tensor, dst, tag=0):
        """Send tensor to rank dst; returns when tensor may be reused. Matched
        in order with dst's recv from this rank; count, dtype and tag must
        agree (else obc.Mismatch on both ranks). Inside obc.group(), the
        group's sends and receives progress together."""
        return self._p2p(N.lib.obc_send_tag, N.lib.obc_isend_tag, tensor, dst, tag, "send")

    def recv(self, tensor, src=None, tag=0):
        """Receive into tensor (in place) the next message from rank src, or
        with src=None the first message of this tag that any rank sends.
        Returns the sender's rank, as torch's recv."""
        if src is None:
            return self._recv_any(tensor, tag, "recv")
        self._p2p(N.lib.obc_recv_tag, N.lib.obc_irecv_tag, tensor, src, tag, "recv")
        return src

    def isend(self, tensor, dst, tag=0):
        """send, returning a Work at once."""
        return self._p2p(N.lib.obc_send_tag, N.lib.obc_isend_tag, tensor, dst, tag, "isend",
                         True)

    def irecv(self, tensor, src=None, tag=0):
        """recv, returning a Work at once; its source_rank() is the sender."""
        if src is None:
            return self._recv_any(tensor, tag, "irecv", True)
        work = self._p2p(N.lib.obc_recv_tag, N.lib.obc_irecv_tag, tensor, src, tag, "irecv",
                         True)
        work._source = src
        return work

    def _recv_any(self, tensor, tag, what, async_op=False):
        if not async_op and _group_depth.n > 0:
            raise ValueError(f"{what}: a receive from any source returns its sender at once, "
                             f"which a group defers; use irecv and the Work's source_rank()")
        buf = B.as_buffer(tensor, what, writable=True, any_dtype=True)
        source = ctypes.c_int(-1)
        work = self._run(N.lib.obc_recv_tag, N.lib.obc_irecv_tag,
                         (buf.ptr, buf.count, buf.dtype, ANY_SOURCE, _tag(tag, what),
                          ctypes.byref(source)), (buf, source), async_op, what=what)
        if work is None:
            return source.value
        work._source = source
        return work

    def _p2p(self, blocking, nonblocking, tensor, peer, tag, what, async_op=False):
        peer = self._root(peer, what)
        receive = blocking is N.lib.obc_recv_tag
        buf = B.as_buffer(tensor, what, writable=receive, any_dtype=True)
        args = (buf.ptr, buf.count, buf.dtype, peer, _tag(tag, what))
        if receive:
            args += (None,)
        return self._run(blocking, nonblocking, args, buf, async_op, what=what)

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


def _absent(lst):
    """None or an empty list: what torch.distributed passes on the ranks
    that are not a gather's destination or a scatter's source."""
    return lst is None or (isinstance(lst, (list, tuple)) and len(lst) == 0)


def _counts(counts, unit):
    """(counts, displacements) as size_t arrays for obc_alltoallv, in the
    buffer's units (elements, or bytes for dtypes sent as uint8)."""
    n = len(counts)
    c = (ctypes.c_size_t * n)(*[k * unit for k in counts])
    d = (ctypes.c_size_t * n)()
    at = 0
    for i, k in enumerate(counts):
        d[i] = at
        at += k * unit
    return c, d


def _tag(tag, what):
    """tag as C takes it, an int; whether it is valid (>= 0) is libobc's
    to say."""
    try:
        tag = operator.index(tag)
    except TypeError:
        raise TypeError(f"{what}: tag must be an int, not {type(tag).__name__}") from None
    if not -2**31 <= tag < 2**31:
        raise ValueError(f"{what}: tag {tag} does not fit a C int")
    return tag


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
