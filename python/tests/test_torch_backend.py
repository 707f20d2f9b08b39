# SPDX-License-Identifier: MIT
"""The torch.distributed backend "obc" (python/obc/torch.py), run by every
rank under obcrun (python_n1/n2/n4) and under torchrun (python_torchrun_backend):
every call on every dtype it takes, sync and async; objects; new_group;
point-to-point; DDP against single-process training; the refusals; the
init methods. The default process group is made once (env://, what obcrun
and torchrun both set) and shared by the tests in file order."""
import datetime
import importlib
import os
import socket
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")

import obc  # noqa: E402
import obc.torch as obc_torch  # noqa: E402
from obc import _native  # noqa: E402

from conftest import TORCH_DTYPES  # noqa: E402

R = dist.ReduceOp
# Dtypes that only move (no reduction): obc sends them as bytes.
BYTE_DTYPES = TORCH_DTYPES + [torch.bool, torch.int16, torch.complex64, torch.complex128]
OPS = [R.SUM, R.PRODUCT, R.MIN, R.MAX, R.AVG]


@pytest.fixture(scope="module")
def world():
    if not dist.is_initialized():
        dist.init_process_group("obc")
    return dist.get_rank(), dist.get_world_size()


def values(rank, k, dtype, base=0):
    """k small integers that depend on rank (exact in every dtype)."""
    v = (torch.arange(k, dtype=torch.float64) + rank + base) % 4
    if dtype == torch.bool:
        return (v % 2).to(torch.bool)
    if dtype.is_complex:
        return torch.complex(v, -v).to(dtype)
    return v.to(dtype)


def expected_reduce(op, dtype, n, k):
    every = [values(r, k, torch.float64, base=1 if op == R.PRODUCT else 0) for r in range(n)]
    if op == R.PRODUCT:
        every = [e % 2 + 1 for e in every]
    stack = torch.stack(every)
    out = {R.SUM: stack.sum(0), R.PRODUCT: stack.prod(0), R.MIN: stack.min(0).values,
           R.MAX: stack.max(0).values, R.AVG: stack.mean(0)}[op]
    if op == R.AVG and not dtype.is_floating_point:
        out = torch.trunc(out)
    return out


def reduce_input(rank, k, dtype, op):
    v = values(rank, k, torch.float64, base=1 if op == R.PRODUCT else 0)
    if op == R.PRODUCT:
        v = v % 2 + 1
    return v.to(dtype)


def finish(work, async_op):
    """The blocking form returns None; the async one a Work like gloo's."""
    if not async_op:
        assert work is None
        return None
    assert work.wait() is True
    assert work.is_completed()
    return work.get_future().value()


def same(a, b):
    assert a.dtype == b.dtype and torch.equal(a, b), (a, b)


def test_backend_registered(world):
    assert dist.get_backend() == "obc" == dist.Backend.OBC
    importlib.reload(obc_torch)  # registering again is harmless
    assert dist.Backend.OBC == "obc"
    assert dist.group.WORLD.name() == "obc"


def test_broadcast_allgather_every_dtype(world):
    rank, n = world
    for dtype in BYTE_DTYPES:
        for async_op in (False, True):
            for root in range(n):
                t = values(rank, 5, dtype)
                w = dist.broadcast(t, src=root, async_op=async_op)
                finish(w, async_op)
                same(t, values(root, 5, dtype))
            out = [torch.empty(3, dtype=dtype) for _ in range(n)]
            w = dist.all_gather(out, values(rank, 3, dtype), async_op=async_op)
            finish(w, async_op)
            for r in range(n):
                same(out[r], values(r, 3, dtype))
            whole = torch.empty(n * 3, dtype=dtype)
            w = dist.all_gather_into_tensor(whole, values(rank, 3, dtype), async_op=async_op) \
                if hasattr(dist, "all_gather_into_tensor") else \
                dist._all_gather_base(whole, values(rank, 3, dtype), async_op=async_op)
            finish(w, async_op)
            same(whole, torch.cat([values(r, 3, dtype) for r in range(n)]))
    t = torch.full((4, 6), float(rank))[:, ::2]  # non-contiguous: staged, copied back
    dist.broadcast(t, src=0)
    assert (t == 0).all()


def test_all_reduce_reduce_every_dtype_and_op(world):
    rank, n = world
    for dtype in TORCH_DTYPES:
        for op in OPS:
            want = expected_reduce(op, dtype, n, 7).to(dtype)
            for async_op in (False, True):
                t = reduce_input(rank, 7, dtype, op)
                w = dist.all_reduce(t, op=op, async_op=async_op)
                value = finish(w, async_op)
                same(t, want)
                if async_op:
                    assert value[0] is t or torch.equal(value[0], t)
                root = (n - 1) if async_op else 0
                t = reduce_input(rank, 7, dtype, op)
                w = dist.reduce(t, dst=root, op=op, async_op=async_op)
                finish(w, async_op)
                if rank == root:
                    same(t, want)
                else:
                    same(t, reduce_input(rank, 7, dtype, op))  # only read
    for dtype in (torch.complex64, torch.complex128):  # SUM/AVG reduce the float parts
        t = values(rank, 4, dtype)
        dist.all_reduce(t)
        same(t, sum(values(r, 4, dtype) for r in range(n)))
    t = torch.ones(4, 6)[:, ::2]  # non-contiguous: staged and copied back
    dist.all_reduce(t)
    assert (t == n).all()


def test_reduce_scatter_every_dtype(world):
    rank, n = world
    for dtype in TORCH_DTYPES:
        for op in (R.SUM, R.MAX):
            for async_op in (False, True):
                blocks = [reduce_input(rank, 3, dtype, op) + (r % 2) for r in range(n)]
                out = torch.empty(3, dtype=dtype)
                w = dist.reduce_scatter(out, blocks, op=op, async_op=async_op)
                finish(w, async_op)
                want = expected_reduce(op, dtype, n, 3) + (rank % 2) * (n if op == R.SUM else 1)
                same(out, want.to(dtype))
                out2 = torch.empty(3, dtype=dtype)
                fn = getattr(dist, "reduce_scatter_tensor", None) or dist._reduce_scatter_base
                w = fn(out2, torch.cat(blocks), op=op, async_op=async_op)
                finish(w, async_op)
                same(out2, want.to(dtype))


def test_gather_scatter_alltoall_every_dtype(world):
    rank, n = world
    for dtype in BYTE_DTYPES:
        for async_op in (False, True):
            for root in {0, n - 1}:
                lst = [torch.empty(2, dtype=dtype) for _ in range(n)] if rank == root else None
                w = dist.gather(values(rank, 2, dtype), gather_list=lst, dst=root,
                                async_op=async_op)
                finish(w, async_op)
                if rank == root:
                    for r in range(n):
                        same(lst[r], values(r, 2, dtype))
                out = torch.empty(2, dtype=dtype)
                src = [values(r, 2, dtype, base=1) for r in range(n)] if rank == root else None
                w = dist.scatter(out, scatter_list=src, src=root, async_op=async_op)
                finish(w, async_op)
                same(out, values(rank, 2, dtype, base=1))
            # all_to_all: block j of rank i is values(i * n + j)
            ins = [values(rank * n + j, 2, dtype) for j in range(n)]
            outs = [torch.empty(2, dtype=dtype) for _ in range(n)]
            w = dist.all_to_all(outs, ins, async_op=async_op)
            finish(w, async_op)
            for i in range(n):
                same(outs[i], values(i * n + rank, 2, dtype))
            out = torch.empty(2 * n, dtype=dtype)
            w = dist.all_to_all_single(out, torch.cat(ins), async_op=async_op)
            finish(w, async_op)
            same(out, torch.cat([values(i * n + rank, 2, dtype) for i in range(n)]))
            # with splits: rank i sends i + j + 1 rows of 3 to rank j
            send = [i + rank + 1 for i in range(n)]
            recv = [i + rank + 1 for i in range(n)]
            inp = torch.cat([values(rank * n + j, send[j] * 3, dtype).view(-1, 3)
                             for j in range(n)])
            out = torch.empty(sum(recv), 3, dtype=dtype)
            w = dist.all_to_all_single(out, inp, output_split_sizes=recv,
                                       input_split_sizes=send, async_op=async_op)
            finish(w, async_op)
            same(out, torch.cat([values(i * n + rank, recv[i] * 3, dtype).view(-1, 3)
                                 for i in range(n)]))


def test_barrier_and_objects(world):
    rank, n = world
    assert dist.barrier() is None
    assert dist.barrier(async_op=True).wait()
    objs = [{"from": rank, "cfg": [1.5, "x"]} if rank == 0 else None, rank]
    dist.broadcast_object_list(objs, src=0)
    assert objs == [{"from": 0, "cfg": [1.5, "x"]}, 0]
    every = [None] * n
    dist.all_gather_object(every, ("rank", rank, "x" * rank))
    assert every == [("rank", r, "x" * r) for r in range(n)]
    got = [None]
    dist.scatter_object_list(got, [{"to": r} for r in range(n)] if rank == 0 else None, src=0)
    assert got == [{"to": rank}]


def test_async_many_in_flight(world):
    rank, n = world
    ts = [torch.full((100 + i,), float(rank + i)) for i in range(20)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    futs = [w.get_future().then(lambda f: f.value()[0].sum().item()) for w in works]
    for i, (w, f) in enumerate(zip(works, futs)):
        w.wait()
        want = sum(r + i for r in range(n))
        assert (ts[i] == want).all()
        assert f.wait() == want * (100 + i)


def test_new_group(world):
    rank, n = world
    for ranks in (list(range(n)), list(range(0, n, 2)), [n - 1], list(range(n - 1, -1, -1))):
        g = dist.new_group(ranks)
        if rank not in ranks:
            assert g == dist.GroupMember.NON_GROUP_MEMBER
            continue
        assert dist.get_backend(g) == "obc"
        ranks = sorted(ranks)  # torch 1.13 orders a group's ranks
        assert dist.get_world_size(g) == len(ranks) and dist.get_rank(g) == ranks.index(rank)
        t = torch.full((5,), float(rank))
        dist.all_reduce(t, group=g)
        assert (t == sum(ranks)).all()
        t = torch.full((3,), float(rank))
        dist.broadcast(t, src=ranks[-1], group=g)  # global rank, as torch takes it
        assert (t == ranks[-1]).all()
        lst = [torch.empty(1) for _ in ranks]
        dist.all_gather(lst, torch.tensor([float(rank)]), group=g)
        assert [int(x) for x in lst] == ranks
        dist.barrier(group=g)


def test_send_recv(world):
    rank, n = world
    if n < 2:
        pytest.skip("point-to-point needs 2 ranks")
    if getattr(_native.lib, "obc_isend", None) is None:
        pytest.skip("this libobc has no obc_isend/obc_irecv yet")
    right, left = (rank + 1) % n, (rank - 1) % n
    for dtype in BYTE_DTYPES:
        # every rank sends first: an isend that waited for its recv would hang here
        w = dist.isend(values(rank, 6, dtype), dst=right)
        got = torch.empty(6, dtype=dtype)
        dist.recv(got, src=left)
        w.wait()
        same(got, values(left, 6, dtype))
        r = dist.irecv(got, src=right)
        dist.send(values(rank, 6, dtype, base=2), dst=left)
        r.wait()
        same(got, values(right, 6, dtype, base=2))


def test_async_error_raised_at_wait(world):
    """A collective that fails after it started (ranks disagree on the
    count) raises from Work.wait() on every rank: the Work torch makes from
    a Future returns True from wait() whatever the Future holds, so obc
    must wrap it for torch's Python functions. The group is its own, which
    the failure breaks."""
    rank, n = world
    if n < 2:
        pytest.skip("needs 2 ranks")
    g = dist.new_group(list(range(n)))
    work = dist.all_reduce(torch.ones(4 + rank), group=g, async_op=True)
    with pytest.raises(RuntimeError, match="count"):
        work.wait()
    dist.barrier()


def test_send_recv_tags(world):
    """Tags travel with the messages: received in send order with the same
    tags they pass; a receive whose tag is not the sender's next message's
    fails on both ranks (in a group of its own, which it breaks) instead of
    taking the other message's data."""
    rank, n = world
    if n < 2:
        pytest.skip("point-to-point needs 2 ranks")
    right, left = (rank + 1) % n, (rank - 1) % n
    works = [dist.isend(torch.full((4,), 10.0 * rank + t), dst=right, tag=t) for t in (1, 2)]
    first, second = torch.empty(4), torch.empty(4)
    dist.recv(first, src=left, tag=1)
    dist.irecv(second, src=left, tag=2).wait()
    for w in works:
        w.wait()
    assert torch.equal(first, torch.full((4,), 10.0 * left + 1))
    assert torch.equal(second, torch.full((4,), 10.0 * left + 2))
    g = dist.new_group(list(range(n)))
    if rank == 0:
        with pytest.raises(RuntimeError):
            dist.send(torch.zeros(2), dst=1, tag=3, group=g)
    elif rank == 1:
        with pytest.raises(RuntimeError, match="tag 3 where this receive has tag 4"):
            dist.recv(torch.zeros(2), src=0, tag=4, group=g)
    dist.barrier()


def test_recv_from_any_source(world):
    """Every rank in turn receives from any source (dist.recv and dist.irecv
    without src) while the others each send it two messages, as torch's own
    test_send_recv_any_source does: the sender each call reports is the one
    whose values arrived, and each sender is reported twice."""
    rank, n = world
    if n < 2:
        pytest.skip("point-to-point needs 2 ranks")
    for receiver in range(n):
        if rank != receiver:
            dist.send(torch.full((10,), float(rank)), dst=receiver)
            dist.send(torch.full((10,), float(rank)), dst=receiver)
            continue
        senders = []
        for i in range(2 * (n - 1)):
            got = torch.full((10,), -1.0)
            if i % 2 == 0:
                sender = dist.recv(got)
            else:
                work = dist.irecv(got)
                work.wait()
                assert work.is_completed()
                sender = work._source_rank()
            assert torch.equal(got, torch.full((10,), float(sender))), (sender, got)
            senders.append(sender)
        assert sorted(senders) == sorted([r for r in range(n) if r != rank] * 2)
    dist.barrier()


def test_recv_from_any_source_in_a_group(world):
    """In a new_group the sender is reported as a global rank."""
    rank, n = world
    if n < 3:
        pytest.skip("needs a group of 2 out of 3 ranks or more")
    members = [n - 2, n - 1]
    g = dist.new_group(members)
    if rank == members[0]:
        got = torch.zeros(3, dtype=torch.int64)
        assert dist.recv(got, group=g) == members[1]
        assert got.tolist() == [members[1]] * 3
    elif rank == members[1]:
        dist.send(torch.full((3,), rank, dtype=torch.int64), dst=members[0], group=g)
    dist.barrier()


def _sparse_of(rank, dtype, hybrid):
    """rank's sparse tensor of shape (7, 5) (hybrid: (7, 5, 3), the last
    dimension dense): entries at positions that overlap between ranks, as
    many as rank (so rank 0 has none), some repeated (uncoalesced)."""
    pos = [((rank + 2 * k) % 7, (3 * rank + k) % 5) for k in range(rank)] * 2
    idx = torch.tensor(pos, dtype=torch.int64).t().reshape(2, -1)
    shape = (7, 5, 3) if hybrid else (7, 5)
    vals = torch.arange(1, len(pos) + 1, dtype=torch.float64).view(-1, *([1] * hybrid))
    vals = (vals * (rank + 1)).expand(-1, *shape[2:]).to(dtype)
    return torch.sparse_coo_tensor(idx, vals, shape)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.float64])
@pytest.mark.parametrize("hybrid", [0, 1], ids=["sparse", "hybrid"])
def test_sparse_all_reduce_sum(world, dtype, hybrid):
    """A sparse COO all_reduce (SUM, as gloo's) equals the dense sum of every
    rank's tensor, on every rank, sync and async."""
    rank, n = world
    want = sum(_sparse_of(r, dtype, hybrid).to_dense() for r in range(n))
    for async_op in (False, True):
        t = _sparse_of(rank, dtype, hybrid)
        work = dist.all_reduce(t, async_op=async_op)
        if async_op:
            work.wait()
        assert t.is_sparse and t.dtype == dtype
        assert torch.equal(t.to_dense(), want), (rank, t, want)
    # ranks that disagree on the shape are told so, all of them, and the group stays usable
    bad = torch.sparse_coo_tensor(torch.zeros((2, 1), dtype=torch.int64), torch.ones(1),
                                  (7, 5 + (rank == n - 1)))
    if n > 1:
        with pytest.raises(RuntimeError, match="differ in shape"):
            dist.all_reduce(bad)
    dist.barrier()


def test_ddp_sparse_embedding_matches_single_process(world):
    """DDP with a sparse-gradient embedding: its reducer all_reduces the
    sparse gradients through the backend, and the trained model equals the
    one trained on the whole batch in one process."""
    rank, n = world

    def model():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.EmbeddingBag(50, 4, mode="sum", sparse=True),
                                   torch.nn.Linear(4, 1))
    gen = torch.Generator().manual_seed(2)
    xs = [torch.randint(0, 50, (4 * n, 3), generator=gen) for _ in range(4)]
    ys = [torch.randn(4 * n, 1, generator=gen) for _ in range(4)]
    ref = model()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for x, y in zip(xs, ys):
        opt.zero_grad()
        torch.nn.functional.mse_loss(ref(x), y, reduction="sum").backward()
        opt.step()
    ddp = torch.nn.parallel.DistributedDataParallel(model())
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for x, y in zip(xs, ys):  # DDP averages over ranks: scale the sum back up
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x[4 * rank:4 * rank + 4]),
                                            y[4 * rank:4 * rank + 4], reduction="sum")
        (loss * n).backward()
        opt.step()
    assert ddp.module[0].weight.grad.is_sparse
    for (name, a), b in zip(ddp.module.named_parameters(), ref.parameters()):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4), name


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 32),
                               torch.nn.Tanh(), torch.nn.Linear(32, 1))


def test_ddp_matches_single_process(world):
    rank, n = world
    gen = torch.Generator().manual_seed(1)
    xs = [torch.randn(8 * n, 8, generator=gen) for _ in range(6)]
    ys = [torch.randn(8 * n, 1, generator=gen) for _ in range(6)]
    ref = _model()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for x, y in zip(xs, ys):  # the whole batch on one process
        opt.zero_grad()
        torch.nn.functional.mse_loss(ref(x), y).backward()
        opt.step()
    # small buckets: several allreduces per step, issued from the backward hooks
    ddp = torch.nn.parallel.DistributedDataParallel(_model(), bucket_cap_mb=0.004)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for x, y in zip(xs, ys):  # each rank its 8 rows; DDP averages the gradients
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x[8 * rank:8 * rank + 8]),
                                     y[8 * rank:8 * rank + 8]).backward()
        opt.step()
    for (name, a), b in zip(ddp.module.named_parameters(), ref.parameters()):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4), name


def test_ddp_failed_allreduce_raises_from_backward(world):
    """A bucket allreduce that fails (rank 1 makes another call on the group,
    so the counts disagree) raises a RuntimeError naming the cause from
    backward() on the ranks running DDP. It crashed the process before: torch
    1.13's reducer reads tensors out of a Python-made Future's value, and an
    error set from Python is only such a value."""
    rank, n = world
    if n < 2:
        pytest.skip("needs 2 ranks")
    g = dist.new_group(list(range(n)))
    ddp = torch.nn.parallel.DistributedDataParallel(_model(), process_group=g)
    x, y = torch.randn(8, 8), torch.randn(8, 1)
    if rank == 1:
        with pytest.raises(RuntimeError, match="count"):
            dist.all_reduce(torch.ones(3), group=g)
    else:
        with pytest.raises(RuntimeError, match="count"):
            torch.nn.functional.mse_loss(ddp(x), y).backward()
    dist.barrier()


def test_refusals_shared(world):
    """Arguments every rank shares: every rank refuses before communicating,
    and the group stays usable."""
    rank, n = world
    cases = [(lambda: dist.all_reduce(torch.ones(4, dtype=torch.int32), op=R.BAND), "BAND"),
             (lambda: dist.all_reduce(torch.ones(4, dtype=torch.int64), op=R.BOR), "BOR"),
             (lambda: dist.reduce(torch.ones(4, dtype=torch.uint8), dst=0, op=R.BXOR), "BXOR"),
             (lambda: dist.all_reduce(torch.ones(4, dtype=torch.complex64), op=R.MAX),
              "complex"),
             (lambda: dist.all_reduce(torch.ones(4, dtype=torch.int16)), "int16"),
             (lambda: dist.all_reduce(torch.ones(4, dtype=torch.bool), async_op=True), "bool")]
    for call, name in cases:
        with pytest.raises(RuntimeError, match=name):
            call()
    t = torch.ones(3)
    dist.all_reduce(t)
    assert (t == n).all()


def test_refusal_local_fails_the_others_fast(world):
    """A refusal only this rank sees (its tensor is not on the CPU) aborts
    the group's communicator: the others fail at once, not at OBC_TIMEOUT."""
    rank, n = world
    g = dist.new_group(list(range(n)))
    g0 = dist.new_group([0])  # every rank takes part in torch's new_group
    t0 = time.monotonic()
    if rank == 0:
        with pytest.raises(RuntimeError, match=r"rank 0.*device 'meta'"):
            dist.all_reduce(torch.ones(4, device="meta"), group=g)
    else:
        with pytest.raises(RuntimeError, match="(?i)abort.*by rank 0"):
            dist.all_reduce(torch.ones(4), group=g)
            dist.all_reduce(torch.ones(4), group=g)
    assert time.monotonic() - t0 < 20
    if rank == 0:
        with pytest.raises(RuntimeError, match="sparse.*SUM only"):
            dist.all_reduce(torch.ones(3).to_sparse(), op=R.MAX, group=g0)
    dist.barrier()  # the default group is untouched


def test_init_methods(world, comm):
    """file://, tcp:// and store= (then env:// again, for whoever runs after)."""
    rank, n = world
    mine = None
    if rank == 0:
        with socket.socket() as s:  # a free port for tcp://
            s.bind(("127.0.0.1", 0))
            mine = (s.getsockname()[1], f"{os.getpid()}-{time.time_ns()}")
    port, token = obc.broadcast_object(mine, comm=comm)
    path = f"/tmp/obc_torch_init_{token}"
    try:
        for how in ("file", "tcp", "store"):
            dist.destroy_process_group()
            kw = dict(rank=rank, world_size=n, timeout=datetime.timedelta(seconds=60))
            if how == "file":
                dist.init_process_group("obc", init_method=f"file://{path}", **kw)
            elif how == "tcp":
                dist.init_process_group("obc", init_method=f"tcp://127.0.0.1:{port}", **kw)
            else:
                store = dist.FileStore(path + ".store", n)
                dist.init_process_group("obc", store=store, **kw)
            t = torch.full((4,), float(rank + 1))
            dist.all_reduce(t)
            assert (t == n * (n + 1) / 2).all(), how
    finally:
        dist.destroy_process_group()
        dist.init_process_group("obc")
        if rank == 0:
            for p in (path, path + ".store"):
                if os.path.exists(p):
                    os.unlink(p)


def test_all_gather_coalesced(world):
    rank, n = world
    ins = [torch.full((2,), float(rank)), torch.full((3, 1), float(-rank))]
    outs = [[torch.empty(2), torch.empty(3, 1)] for _ in range(n)]
    dist.all_gather_coalesced(outs, ins)
    for r in range(n):
        assert (outs[r][0] == r).all() and (outs[r][1] == -r).all()


def test_sequence_number(world):
    pg = dist.group.WORLD
    pg._set_sequence_number_for_group()
    dist.all_reduce(torch.ones(1))
    dist.barrier()
    assert pg._get_sequence_number_for_group() == 2


def _profiled_events(kind, body):
    """Run body() under torch's profiler of that kind; the obc records it
    left (autograd: torch.autograd.profiler.profile; torch: torch.profiler)."""
    if kind == "autograd":
        with torch.autograd.profiler.profile(record_shapes=True) as prof:
            body()
        every = prof.function_events
    else:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                    record_shapes=True) as prof:
            body()
        every = prof.events()
    return [e for e in every if e.name.startswith("obc:")]


@pytest.mark.parametrize("kind", ["autograd", "torch"])
def test_profiler_records_each_call_once(world, kind):
    """Under torch's profilers each call leaves one asynchronous record named
    "obc:<call>" with its input shapes, as gloo's do ("gloo:all_reduce"), and
    the calls still complete with the right values; a coalesced all_reduce is
    one record."""
    rank, n = world
    t = torch.full((3, 4), float(rank))
    outs = [torch.empty(3, 4) for _ in range(n)]
    got = torch.empty(7)

    def body():
        dist.all_reduce(t)
        dist.all_reduce(t, async_op=True).wait()
        dist.broadcast(t, src=n - 1)
        dist.all_reduce_coalesced([torch.ones(2), torch.ones(5)])
        dist.all_gather(outs, torch.full((3, 4), float(rank)))
        dist.barrier()
        if n > 1:
            reqs = [dist.isend(torch.full((7,), float(rank)), dst=(rank + 1) % n),
                    dist.irecv(got, src=(rank - 1) % n)]
            for r in reqs:
                r.wait()
    events = _profiled_events(kind, body)
    total = sum(range(n))
    assert (t == n * total).all(), t  # summed twice: total, then n * total
    assert all((o == r).all() for r, o in enumerate(outs))
    if n > 1:
        assert (got == (rank - 1) % n).all()
    counts = {}
    for e in events:
        counts[e.name] = counts.get(e.name, 0) + e.count
        assert e.is_async, e.name
        assert e.cpu_time >= 0
    want = {"obc:all_reduce": 3, "obc:broadcast": 1, "obc:all_gather": 1, "obc:barrier": 1}
    if n > 1:
        want.update({"obc:send": 1, "obc:recv": 1})
    assert counts == want, counts
    shapes = sorted(e.input_shapes for e in events if e.name == "obc:all_reduce")
    assert shapes == [[[2], [5]], [[3, 4]], [[3, 4]]], shapes


def test_profiler_off_keeps_the_callers_thread(world):
    """Without a profiler a blocking call runs on the caller's thread
    (nothing is handed to the completion thread); under one it goes through
    that thread, where its record ends."""
    pg = dist.group.WORLD
    handed = []
    real = pg._enqueue

    def counting(*args):
        handed.append(args[0])
        return real(*args)
    pg._enqueue = counting
    try:
        t = torch.ones(4)
        dist.all_reduce(t)
        dist.broadcast(t, src=0)
        assert handed == []
        with torch.autograd.profiler.profile():
            dist.all_reduce(t)
        assert len(handed) == 1
    finally:
        del pg._enqueue
