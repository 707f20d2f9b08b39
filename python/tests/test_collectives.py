# SPDX-License-Identifier: MIT
"""Every collective on NumPy arrays and torch tensors of every obc dtype,
blocking and async, against values each rank computes for itself."""
import numpy as np
import pytest
from conftest import KINDS, as_f64, kind_id, make, torch

import obc

COUNT = 1031  # odd, crosses no fast path exactly


def values(rank, n=COUNT):
    return (np.arange(n) % 5) + rank + 1  # small: exact in every dtype, sums fit int8


def expected_reduce(op, size, n=COUNT):
    everyone = np.stack([values(r, n).astype(np.float64) for r in range(size)])
    if op == obc.ReduceOp.SUM:
        return everyone.sum(0)
    if op == obc.ReduceOp.PRODUCT:
        return np.stack([1 + (np.arange(n) + r) % 2 for r in range(size)]).prod(0).astype(float)
    if op == obc.ReduceOp.MIN:
        return everyone.min(0)
    if op == obc.ReduceOp.MAX:
        return everyone.max(0)
    return np.trunc(everyone.sum(0) / size)  # AVG; exact for floats too (sums are integers)


def inputs(kind, op, rank, n=COUNT):
    if op == obc.ReduceOp.PRODUCT:
        return make(kind, 1 + (np.arange(n) + rank) % 2)
    return make(kind, values(rank, n))


def avg_expected(kind, op, size):
    want = expected_reduce(op, size)
    if op == obc.ReduceOp.AVG and "float" in kind_id(kind):
        want = np.stack([values(r).astype(np.float64) for r in range(size)]).sum(0) / size
    return want


OPS = list(obc.ReduceOp.__members__.values())[:5]


@pytest.mark.parametrize("async_op", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("op", OPS, ids=lambda o: o.name)
@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_all_reduce(comm, kind, op, async_op):
    x = inputs(kind, op, comm.rank)
    work = obc.all_reduce(x, op=op, async_op=async_op)
    if async_op:
        assert isinstance(work, obc.Work)
        assert work.wait() is True
        assert work.is_completed()
    else:
        assert work is None
    np.testing.assert_allclose(as_f64(x), avg_expected(kind, op, comm.size), rtol=1e-2)


@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_broadcast_every_root(comm, kind):
    for src in range(comm.size):
        x = make(kind, values(comm.rank))
        obc.broadcast(x, src=src)
        assert (as_f64(x) == values(src)).all()


@pytest.mark.parametrize("kind", [("numpy", np.int16), ("numpy", np.bool_),
                                  ("numpy", np.complex64), ("torch", torch.int16),
                                  ("torch", torch.bool)], ids=kind_id)
def test_broadcast_moves_bytes_of_any_dtype(comm, kind):
    x = make(kind, values(comm.rank) % 2)
    obc.broadcast(x, src=comm.size - 1)
    assert (as_f64(x) == values(comm.size - 1) % 2).all()


@pytest.mark.parametrize("op", [obc.ReduceOp.SUM, obc.ReduceOp.MAX], ids=lambda o: o.name)
@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_reduce(comm, kind, op):
    dst = comm.size - 1
    x = inputs(kind, op, comm.rank)
    work = obc.reduce(x, dst=dst, op=op, async_op=True)
    work.wait()
    if comm.rank == dst:
        assert (as_f64(x) == expected_reduce(op, comm.size)).all()
    else:
        assert (as_f64(x) == values(comm.rank)).all(), "reduce wrote a non-root's input"


@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_all_gather_into_one_tensor(comm, kind):
    x = make(kind, values(comm.rank, 7))
    out = make(kind, np.zeros(7 * comm.size))
    obc.all_gather(out, x)
    assert (as_f64(out) == np.concatenate([values(r, 7) for r in range(comm.size)])).all()


@pytest.mark.parametrize("async_op", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("kind", [("numpy", np.float32), ("torch", torch.bfloat16),
                                  ("torch", torch.int64)], ids=kind_id)
def test_all_gather_into_list(comm, kind, async_op):
    x = make(kind, values(comm.rank, 6)).reshape(2, 3)
    out = [make(kind, np.zeros(6)).reshape(2, 3) for _ in range(comm.size)]
    work = obc.all_gather(out, x, async_op=async_op)
    if async_op:
        work.wait()
    for r, t in enumerate(out):
        assert (as_f64(t).ravel() == values(r, 6)).all()


@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_reduce_scatter(comm, kind):
    n = 5
    whole = np.concatenate([values(comm.rank, n) + b for b in range(comm.size)])
    out = make(kind, np.zeros(n))
    obc.reduce_scatter(out, make(kind, whole))
    want = sum(values(r, n) + comm.rank for r in range(comm.size))
    assert (as_f64(out) == want).all()


def test_reduce_scatter_from_list(comm):
    n = 4
    inp = [torch.full((n,), float(comm.rank + b)) for b in range(comm.size)]
    out = torch.empty(n)
    obc.reduce_scatter(out, inp, op=obc.ReduceOp.MAX)
    assert (out == comm.size - 1 + comm.rank).all()


def test_barrier_and_async_barrier(comm):
    assert obc.barrier() is None
    work = obc.barrier(async_op=True)
    work.wait()
    assert work.is_completed() and work.is_success()


def test_many_async_calls_waited_in_reverse(comm):
    xs = [np.full(100 + i, comm.rank + i, dtype=np.int64) for i in range(12)]
    works = [obc.all_reduce(x, async_op=True) for x in xs]
    for w in reversed(works):
        w.wait()
    for i, x in enumerate(xs):
        assert (x == sum(r + i for r in range(comm.size))).all()


def test_is_completed_polls_to_completion(comm):
    x = np.ones(1 << 20, dtype=np.float32)
    work = obc.all_reduce(x, async_op=True)
    while not work.is_completed():
        pass
    work.wait()
    assert (x == comm.size).all()


def test_group_fuses_many_small_broadcasts(comm):
    xs = [torch.full((i + 1,), float(comm.rank)) for i in range(50)]
    with obc.group():
        for x in xs:
            obc.broadcast(x, src=0)
    assert all((x == 0).all() for x in xs)


def test_zero_size_and_scalars(comm):
    empty = np.empty(0, dtype=np.float32)
    obc.all_reduce(empty)
    obc.broadcast(empty)
    scalar = torch.tensor(float(comm.rank + 1))
    obc.all_reduce(scalar)
    assert scalar.item() == sum(range(1, comm.size + 1))


def test_results_are_zero_copy(comm):
    """The tensor itself is written: views and the original share memory."""
    base = torch.zeros(4, 8)
    row = base[1]
    row.fill_(comm.rank + 1)
    obc.all_reduce(row)
    assert (base[1] == sum(range(1, comm.size + 1))).all() and (base[0] == 0).all()


def test_hash_and_check_buffer(comm):
    same = np.arange(1000, dtype=np.int32)
    assert comm.check_buffer(same) == (0, -1)
    differs = same.copy()
    if comm.rank == comm.size - 1 and comm.size > 1:
        differs[17] += 1
    want = (1, comm.size - 1) if comm.size > 1 else (0, -1)
    assert comm.check_buffer(differs) == want
