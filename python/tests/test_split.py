# SPDX-License-Identifier: MIT
"""Communicator.split and dup: membership and order proved by collectives
inside the children (NumPy and torch), None for an undefined color, a split
of a split, children outliving their parent, bad arguments."""
import numpy as np
import pytest
from conftest import torch

import obc


def members(size, color_of, key_of):
    """{color: [parent ranks in child order]} as obc_comm_split orders them."""
    out = {}
    for r in sorted(range(size), key=lambda r: (key_of(r), r)):
        if color_of(r) is not None:
            out.setdefault(color_of(r), []).append(r)
    return out


def check_child(child, expect, parent_ids):
    """child's ranks are parent ranks expect, in order; parent_ids maps a
    parent rank to the world rank carried in the data."""
    assert child.size == len(expect)
    mine = np.array([parent_ids[expect[child.rank]]], dtype=np.int64)
    got = np.zeros(child.size, dtype=np.int64)
    obc.all_gather(got, mine, comm=child)
    assert list(got) == [parent_ids[r] for r in expect]
    t = torch.full((7,), float(mine[0]), dtype=torch.float32)
    obc.all_reduce(t, comm=child)
    assert torch.all(t == float(sum(parent_ids[r] for r in expect)))
    b = torch.arange(5, dtype=torch.int32) + (100 * int(mine[0]) if child.rank == 0 else -1)
    obc.broadcast(b, src=0, comm=child)
    assert b.tolist() == [100 * parent_ids[expect[0]] + i for i in range(5)]
    obc.barrier(comm=child)


PATTERNS = {
    "parity": (lambda r, n: r % 2, lambda r, n: r),
    "reversed": (lambda r, n: 0, lambda r, n: n - r),
    "blocks": (lambda r, n: r // 2, lambda r, n: 0),
    "only-last": (lambda r, n: 3 if r == n - 1 else None, lambda r, n: 0),
}


@pytest.mark.parametrize("name", list(PATTERNS))
def test_split_patterns(comm, name):
    color_of, key_of = PATTERNS[name]
    n = comm.size
    groups = members(n, lambda r: color_of(r, n), lambda r: key_of(r, n))
    child = comm.split(color_of(comm.rank, n), key=key_of(comm.rank, n))
    mine = color_of(comm.rank, n)
    if mine is None:
        assert child is None
    else:
        assert isinstance(child, obc.Communicator)
        check_child(child, groups[mine], list(range(n)))
    obc.barrier(comm=comm)  # the parent is untouched, between the children's calls
    if child is not None:
        child.destroy()


def test_split_of_split_and_dup(comm):
    n, r = comm.size, comm.rank
    half = comm.split(r % 2, key=-r)
    expect = members(n, lambda q: q % 2, lambda q: -q)[r % 2]
    check_child(half, expect, list(range(n)))
    quarter = half.split(half.rank // 2, key=0)
    sub = [expect[i] for i in range(len(expect)) if i // 2 == half.rank // 2]
    check_child(quarter, sub, list(range(n)))
    d = comm.dup()
    check_child(d, list(range(n)), list(range(n)))
    half.destroy()  # the grandchild outlives its parent
    check_child(quarter, sub, list(range(n)))
    quarter.destroy()
    with d:
        obc.barrier(comm=d)
    assert "destroyed" in repr(d)


def test_split_bad_args(comm):
    with pytest.raises(ValueError):
        comm.split(-5)
    with pytest.raises(TypeError):
        comm.split("a")
    assert comm.split(obc.UNDEFINED) is None  # collective: every rank passes it
    obc.barrier(comm=comm)
