# SPDX-License-Identifier: MIT
"""gather, scatter, all_to_all and all_to_all_single (obc_gather,
obc_scatter, obc_alltoall[v]) on NumPy and torch: every rank checks that
each value reached the right place. A value encodes (sender, receiver,
index), so a block delivered to the wrong rank or at the wrong offset
shows. Values stay below 256, exact in every kind tested (bfloat16 too)."""
import numpy as np
import pytest

import obc
from conftest import as_f64, make, torch

KINDS = [("numpy", np.float32), ("numpy", np.int64), ("numpy", np.uint8),
         ("torch", torch.float32), ("torch", torch.bfloat16), ("torch", torch.int32)]
IDS = [f"{k[0]}-{np.dtype(k[1]).name if k[0] == 'numpy' else str(k[1])[6:]}" for k in KINDS]


def code(src, dst, i):
    """The value src sends to dst at position i (distinct for 8 ranks, i < 3)."""
    return (src * 8 + dst) * 3 + i if src < 8 and dst < 8 else (src + dst + i) % 251


def empty(kind, n, shape_tail=()):
    lib, dtype = kind
    if lib == "numpy":
        return np.full((n,) + shape_tail, 255, dtype=dtype)
    return torch.full((n,) + shape_tail, 255).to(dtype)


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_gather_list_and_whole(comm, kind):
    n, me = comm.size, comm.rank
    for dst in sorted({0, n - 1}):
        mine = make(kind, [code(me, dst, i) for i in range(3)])
        lst = [empty(kind, 3) for _ in range(n)] if me == dst else None
        comm.gather(mine, lst, dst=dst)
        whole = empty(kind, 3 * n) if me == dst else None
        work = obc.gather(mine, whole, dst=dst, async_op=True)
        assert work.wait()
        if me == dst:
            for r in range(n):
                want = [code(r, dst, i) for i in range(3)]
                assert list(as_f64(lst[r])) == want
                assert list(as_f64(whole[3 * r:3 * r + 3])) == want


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_scatter_list_and_whole(comm, kind):
    n, me = comm.size, comm.rank
    for src in sorted({0, n - 1}):
        blocks = [make(kind, [code(src, r, i) for i in range(2)]) for r in range(n)]
        out = empty(kind, 2)
        comm.scatter(out, blocks if me == src else None, src=src)
        assert list(as_f64(out)) == [code(src, me, i) for i in range(2)]
        whole = make(kind, [code(src, r, i) for r in range(n) for i in range(2)])
        out2 = empty(kind, 2)
        obc.scatter(out2, whole if me == src else [], src=src, async_op=True).wait()
        assert list(as_f64(out2)) == list(as_f64(out))


def sizes(src, dst):
    """Rows src sends dst in the uneven tests: 0, 1 or 2 (zeros included)."""
    return (src + 2 * dst) % 3


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_all_to_all_lists_uneven(comm, kind):
    n, me = comm.size, comm.rank
    ins = [make(kind, [code(me, j, i) for i in range(sizes(me, j))]) for j in range(n)]
    outs = [empty(kind, sizes(j, me)) for j in range(n)]
    obc.all_to_all(outs, ins)
    for j in range(n):
        assert list(as_f64(outs[j])) == [code(j, me, i) for i in range(sizes(j, me))]


def rows(kind, counts, src, dsts, width):
    """A (sum(counts), width) array: counts[k] rows for dsts[k], each row
    code(src, dst, i) + 0, +1, ... across the width... kept below 256."""
    vals = [[code(src, d, i) for _ in range(width)] for k, d in enumerate(dsts)
            for i in range(counts[k])]
    return make(kind, np.array(vals, dtype=np.float64).reshape(-1, width))


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_all_to_all_single(comm, kind):
    n, me = comm.size, comm.rank
    peers = list(range(n))
    # equal splits (None): 2 rows of width 3 per peer, out of place and in place
    inp = rows(kind, [2] * n, me, peers, 3)
    want = np.array([[code(j, me, i)] * 3 for j in peers for i in range(2)], dtype=np.float64)
    out = empty(kind, 2 * n, (3,))
    comm.all_to_all_single(out, inp)
    assert (as_f64(out) == want).all()
    comm.all_to_all_single(inp, inp)  # obc_alltoall in place
    assert (as_f64(inp) == want).all()
    # uneven splits with zeros; async; in place through a copy of the input
    sin = [sizes(me, j) for j in peers]
    sout = [sizes(j, me) for j in peers]
    inp = rows(kind, sin, me, peers, 2)
    want = np.array([[code(j, me, i)] * 2 for j in peers for i in range(sizes(j, me))],
                    dtype=np.float64).reshape(-1, 2)
    out = empty(kind, sum(sout), (2,))
    obc.all_to_all_single(out, inp, out_splits=sout, in_splits=sin, async_op=True).wait()
    assert (as_f64(out) == want).all()
    out = empty(kind, sum(sout), (2,))
    comm.all_to_all_single(out, inp, output_split_sizes=sout, input_split_sizes=sin)
    assert (as_f64(out) == want).all()
    if sin == sout:
        comm.all_to_all_single(inp, inp, sout, sin)
        assert (as_f64(inp) == want).all()


def test_bad_arguments(comm):
    n, me = comm.size, comm.rank
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(ValueError, match="gather_list"):
        comm.gather(x, None if n > 1 else None, dst=me)  # the destination needs a list
    with pytest.raises(ValueError, match="one per rank"):
        comm.gather(x, [x.copy() for _ in range(n + 1)], dst=me)
    with pytest.raises(ValueError, match="needs"):
        comm.scatter(x, np.zeros(4 * n + 1, dtype=np.float32), src=me)
    with pytest.raises(TypeError, match="differ in type"):
        comm.scatter(x, [np.zeros(4, dtype=np.float64)] * n, src=me)
    with pytest.raises(ValueError, match="not a rank"):
        comm.gather(x, None, dst=n)
    if n > 1:
        with pytest.raises(ValueError, match="must be None"):
            comm.gather(x, [x.copy() for _ in range(n)], dst=(me + 1) % n)
        with pytest.raises(ValueError, match="must be None"):
            comm.scatter(x, [x.copy() for _ in range(n)], src=(me + 1) % n)
    y = np.zeros((3 * n + 1, 2), dtype=np.float32)
    if n > 1:
        with pytest.raises(ValueError, match="do not split equally"):
            comm.all_to_all_single(y, y)
    with pytest.raises(ValueError, match="sum to"):
        comm.all_to_all_single(y, y, [1] * n, [1] * n)
    with pytest.raises(ValueError, match="one per rank"):
        comm.all_to_all_single(y, y, [3 * n + 1], [3 * n + 1] + [0] * n)
    with pytest.raises(ValueError, match="differ in shape"):
        comm.all_to_all_single(np.zeros((n, 3), np.float32), np.zeros((n, 2), np.float32))
    with pytest.raises(ValueError, match="one per rank"):
        comm.all_to_all([x] * n, [x] * (n + 1))
    # this rank to itself: 1 row out, 2 rows expected back: the library refuses it
    sin = [0] * n
    sout = [0] * n
    sin[me], sout[me] = 1, 2
    with pytest.raises(obc.InvalidArgument, match="itself"):
        comm.all_to_all_single(np.zeros((2, 2), np.float32), np.zeros((1, 2), np.float32),
                               sout, sin)


def test_count_mismatch_between_peers_is_mismatch(comm, fresh_comm):
    n, me = comm.size, comm.rank
    if n < 2:
        pytest.skip("needs two ranks")
    # rank 1 sends rank 0 two rows where rank 0 expects one
    sin, sout = [1] * n, [1] * n
    if me == 1:
        sin[0] = 2
    inp = np.zeros((sum(sin), 2), np.float32)
    out = np.zeros((sum(sout), 2), np.float32)
    if me == 0:
        with pytest.raises(obc.Mismatch, match="rank 1"):
            fresh_comm.all_to_all_single(out, inp, sout, sin)
    else:
        try:  # the others fail with it (or Aborted), or finish first
            fresh_comm.all_to_all_single(out, inp, sout, sin)
        except obc.ObcError as e:
            assert isinstance(e, (obc.Mismatch, obc.Aborted)), e
