# SPDX-License-Identifier: MIT
"""obc for Python: collectives on NumPy arrays and CPU torch tensors,
shaped like torch.distributed, over libobc (shared memory within a host).

    import obc
    obc.init()                                # obcrun, torchrun, mpirun or srun environment
    obc.broadcast(t, src=0)                   # in place, zero-copy
    obc.all_reduce(t, op=obc.ReduceOp.SUM)
    obc.sync_module(model, src=0)             # every parameter and buffer
    obc.check_consistency(model)              # {} or {name: [ranks that differ]}

Every function takes comm= (a Communicator) and otherwise uses the one
obc.init() made. Errors raise obc.ObcError subclasses carrying obc's message.
"""
import atexit
import datetime
import os

from . import _native
from .comm import Communicator, ReduceOp, Work, get_unique_id, group
from .errors import (Aborted, AuthError, InternalError, InvalidArgument, Mismatch, NoMemory,
                     ObcError, PeerLost, ProtocolError, SystemCallError, Timeout)
from . import grad as _grad
from . import model as _model
from . import objects as _objects

__version__ = _native.version()
UNDEFINED = _native.UNDEFINED  # Communicator.split's color for "no new communicator"

__all__ = [
    "init", "destroy", "is_initialized", "default_comm", "get_rank", "get_world_size",
    "broadcast", "empty", "all_reduce", "reduce", "all_gather", "reduce_scatter", "barrier",
    "send", "recv", "isend", "irecv",
    "gather", "scatter", "all_to_all", "all_to_all_single",
    "broadcast_object", "all_gather_object", "sync_module", "check_consistency",
    "GradientAverager", "Communicator", "Work", "ReduceOp", "get_unique_id", "group",
    "UNDEFINED",
    "ObcError", "InvalidArgument", "NoMemory", "SystemCallError", "Timeout", "PeerLost",
    "Mismatch", "Aborted", "AuthError", "ProtocolError", "InternalError",
]

_default = None


def init(timeout=None):
    """Join the job described by the environment (obcrun sets OBC_RANK,
    OBC_NRANKS and OBC_BOOTSTRAP; torchrun sets RANK, WORLD_SIZE,
    MASTER_ADDR and MASTER_PORT; Open MPI, MPICH and Slurm, see
    docs/launchers.md) and make it the default communicator."""
    global _default
    if _default is not None:
        raise RuntimeError("obc.init: already initialised (call obc.destroy() first)")
    store = _torchrun_store(timeout)
    if store is None:
        _default = Communicator(timeout=timeout)
    else:
        global _store_joins
        _store_joins += 1
        key = f"obc/init/{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}/{_store_joins}"
        _default = Communicator.from_store(store, int(os.environ["RANK"]),
                                           int(os.environ["WORLD_SIZE"]), key, timeout=timeout)
    return _default


_store_joins = 0  # obc.init calls through a torch store: each one's key differs


def _torchrun_store(timeout):
    """Under torchrun (and nothing of obc's overriding it), a torch store
    every rank reaches, through which rank 0 hands out a unique id whose
    port the kernel picked; else None, and the C library finds the
    rendezvous itself (MASTER_PORT + 1 under torchrun, docs/launchers.md),
    a port that torchrun did not reserve and any connection may hold.
    The store: the default process group's, once torch.distributed is
    initialised; torchrun's agent store where it runs one
    (TORCHELASTIC_USE_AGENT_STORE=True); else (--standalone, rdzv c10d)
    nothing listens on MASTER_PORT before torch's own init_process_group,
    so rank 0 serves a store there for the join (gone with it after)."""
    env = os.environ
    if "TORCHELASTIC_RUN_ID" not in env or {"OBC_BOOTSTRAP", "OBC_RANK", "OBC_NRANKS"} & set(env):
        return None
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    if dist.is_available() and dist.is_initialized():
        return dist.distributed_c10d._get_default_store()
    seconds = timeout if timeout is not None else float(env.get("OBC_TIMEOUT") or 300.0)
    wait = datetime.timedelta(seconds=seconds if seconds > 0 else 10**7)
    host, port = env["MASTER_ADDR"], int(env["MASTER_PORT"])
    if env.get("TORCHELASTIC_USE_AGENT_STORE") == "True":
        return dist.TCPStore(host, port, is_master=False, timeout=wait)
    return dist.TCPStore(host, port, int(env["WORLD_SIZE"]), is_master=env["RANK"] == "0",
                         timeout=wait, wait_for_workers=False)


def destroy():
    """Destroy the default communicator (also done at exit)."""
    global _default
    comm, _default = _default, None
    if comm is not None:
        comm.destroy()


atexit.register(destroy)


def is_initialized():
    return _default is not None


def default_comm():
    if _default is None:
        raise RuntimeError("obc: call obc.init() first (or pass comm=)")
    return _default


def _comm(comm):
    return comm if comm is not None else default_comm()


def get_rank(comm=None):
    return _comm(comm).rank


def get_world_size(comm=None):
    return _comm(comm).size


def broadcast(tensor, src=0, async_op=False, comm=None, wire_dtype=None):
    """tensor (in place) receives src's tensor on every rank; with
    wire_dtype (torch.bfloat16, "bfloat16", torch.float16, np.float16) a
    float32 tensor travels in that dtype and every rank ends with src's
    values rounded once to it (Communicator.broadcast)."""
    return _comm(comm).broadcast(tensor, src, async_op, wire_dtype=wire_dtype)


def empty(shape, dtype=None, like=None, comm=None):
    """An array (or a torch tensor with like=torch, a tensor, or a torch
    dtype) in shared memory of the communicator (obc_mem_alloc); freed
    when it is gone (Communicator.empty)."""
    return _comm(comm).empty(shape, dtype, like)


def all_reduce(tensor, op=ReduceOp.SUM, async_op=False, comm=None):
    """tensor (in place) = op over every rank's tensor."""
    return _comm(comm).all_reduce(tensor, op, async_op)


def reduce(tensor, dst=0, op=ReduceOp.SUM, async_op=False, comm=None):
    """dst's tensor (in place) = op over every rank's tensor."""
    return _comm(comm).reduce(tensor, dst, op, async_op)


def all_gather(output, tensor, async_op=False, comm=None):
    """output (a list of world-size tensors, or one tensor of world-size
    times tensor's elements) receives every rank's tensor."""
    return _comm(comm).all_gather(output, tensor, async_op)


def reduce_scatter(output, input, op=ReduceOp.SUM, async_op=False, comm=None):
    """output = op over ranks of this rank's block of input."""
    return _comm(comm).reduce_scatter(output, input, op, async_op)


def gather(tensor, gather_list=None, dst=0, async_op=False, comm=None):
    """dst's gather_list (size tensors, or one of size x numel) receives
    every rank's tensor; None on the other ranks."""
    return _comm(comm).gather(tensor, gather_list, dst, async_op)


def scatter(tensor, scatter_list=None, src=0, async_op=False, comm=None):
    """tensor (in place) receives entry `rank` of src's scatter_list."""
    return _comm(comm).scatter(tensor, scatter_list, src, async_op)


def all_to_all(output_tensor_list, input_tensor_list, async_op=False, comm=None):
    """input_tensor_list[j] to rank j, output_tensor_list[j] from rank j
    (sizes may differ per peer)."""
    return _comm(comm).all_to_all(output_tensor_list, input_tensor_list, async_op)


def all_to_all_single(output, input, out_splits=None, in_splits=None, async_op=False,
                      comm=None, *, output_split_sizes=None, input_split_sizes=None):
    """Rows of input to the ranks by in_splits, rows from them into output
    by out_splits (None: equal splits)."""
    return _comm(comm).all_to_all_single(output, input, out_splits, in_splits, async_op,
                                         output_split_sizes=output_split_sizes,
                                         input_split_sizes=input_split_sizes)


def barrier(async_op=False, comm=None):
    return _comm(comm).barrier(async_op)


def send(tensor, dst, comm=None, tag=0):
    """Send tensor to rank dst (blocking; matched in order per pair, tags
    compared: docs/p2p.md)."""
    return _comm(comm).send(tensor, dst, tag)


def recv(tensor, src=None, comm=None, tag=0):
    """Receive into tensor the next message from rank src, or with
    src=None the first message of this tag from any rank (blocking);
    returns the sender's rank."""
    return _comm(comm).recv(tensor, src, tag)


def isend(tensor, dst, comm=None, tag=0):
    """send, returning a Work."""
    return _comm(comm).isend(tensor, dst, tag)


def irecv(tensor, src=None, comm=None, tag=0):
    """recv, returning a Work (its source_rank() is the sender)."""
    return _comm(comm).irecv(tensor, src, tag)


def broadcast_object(obj, src=0, comm=None):
    """src's picklable obj, returned on every rank (size, then the pickle
    streamed in chunks; memory: the pickle once)."""
    return _objects.broadcast_object(_comm(comm), obj, src)


def all_gather_object(obj, comm=None):
    """[every rank's obj] in rank order."""
    return _objects.all_gather_object(_comm(comm), obj)


def sync_module(model, src=0, bucket_mb=25, progress=False, comm=None, wire_dtype=None,
                shared=False):
    """src's parameters and buffers into model on every rank, in place, in
    bounded buckets, after checking that names, shapes and dtypes match
    (obc.Mismatch names any difference). wire_dtype: float32 tensors travel
    in it (obc.broadcast's wire_dtype); shared=True first moves every
    tensor's data into obc.empty memory (model.sync_module)."""
    return _model.sync_module(_comm(comm), model, src, bucket_mb, progress,
                              wire_dtype=wire_dtype, shared=shared)


def check_consistency(model_or_tensors, src=0, comm=None):
    """{name: [ranks]} of tensors that differ from src's; {} if none."""
    return _model.check_consistency(_comm(comm), model_or_tensors, src)


def GradientAverager(model, bucket_mb=25, comm=None):  # noqa: N802 (a class to the user)
    """Overlapped gradient averaging for data-parallel training; see
    obc.grad.GradientAverager."""
    return _grad.GradientAverager(_comm(comm), model, bucket_mb)
