# SPDX-License-Identifier: MIT
"""send/recv/isend/irecv on NumPy arrays and torch tensors of every obc dtype:
a ring shift in a group, isend/irecv outside one, sends to self, and a
mismatched pair raising obc.Mismatch on both ranks; tags in send order, a
receive from any source by tag, and a tag mismatch."""
import time

import numpy as np
import pytest
from conftest import KINDS, as_f64, kind_id, make, torch

import obc

COUNT = 1031


def payload(rank, n=COUNT):
    return (np.arange(n) % 7) + rank + 1  # exact in every dtype


def empty_like_kind(kind, n=COUNT):
    return make(kind, np.zeros(n))


@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_ring_shift_group(comm, kind):
    right, left = (comm.rank + 1) % comm.size, (comm.rank - 1) % comm.size
    out, got = make(kind, payload(comm.rank)), empty_like_kind(kind)
    with obc.group():
        obc.send(out, right)
        obc.recv(got, left)
    np.testing.assert_array_equal(as_f64(got), payload(left))


@pytest.mark.parametrize("lib", ["numpy", "torch"])
def test_isend_irecv_outside_group(comm, lib):
    kind = (lib, np.float32 if lib == "numpy" else torch.float32)
    right, left = (comm.rank + 1) % comm.size, (comm.rank - 1) % comm.size
    n = (1 << 20) + 3  # large: both ranks send first, the runner batches the two
    out, got = make(kind, payload(comm.rank, n)), empty_like_kind(kind, n)
    works = [comm.isend(out, right), comm.irecv(got, left)]
    assert all(isinstance(w, obc.Work) for w in works)
    for w in works:
        assert w.wait()
    np.testing.assert_array_equal(as_f64(got), payload(left, n))


def test_pingpong_and_self(comm):
    x = np.arange(10, dtype=np.int64) + comm.rank
    y = np.zeros(10, dtype=np.int64)
    obc.send(x, comm.rank)  # to self: buffered
    obc.recv(y, comm.rank)
    np.testing.assert_array_equal(y, x)
    if comm.size < 2 or comm.rank > 1:
        return
    peer = 1 - comm.rank
    t = torch.arange(5, dtype=torch.float64) * (comm.rank + 1)
    r = torch.zeros(5, dtype=torch.float64)
    if comm.rank == 0:
        obc.send(t, peer)
        obc.recv(r, peer)
    else:
        obc.recv(r, peer)
        obc.send(t, peer)
    assert torch.equal(r, torch.arange(5, dtype=torch.float64) * (peer + 1))


def test_bad_peer(comm):
    with pytest.raises(ValueError):
        obc.send(np.zeros(3), comm.size)
    with pytest.raises(ValueError):
        comm.irecv(np.zeros(3), -1)


@pytest.mark.parametrize("recv_dtype, tags, match", [
    (np.float32, (0, 0), "float32"),  # the dtype differs
    (np.int32, (1, 2), "tag 1 where this receive has tag 2"),
], ids=["dtype", "tag"])
def test_mismatch_both_sides(fresh_comm, recv_dtype, tags, match):
    c = fresh_comm
    if c.size < 2:
        pytest.skip("needs two ranks")
    if c.rank > 1:
        return  # the others are not part of the pair; their communicator breaks too
    if c.rank == 0:
        with pytest.raises(obc.Mismatch):
            c.send(np.zeros(8, dtype=np.int32), 1, tag=tags[0])
    else:
        with pytest.raises(obc.Mismatch, match=match):
            c.recv(np.zeros(8, dtype=recv_dtype), 0, tag=tags[1])


def test_tags_in_send_order(comm):
    """Tagged messages between ring neighbours, received in send order with
    the same tags; untagged calls are tag 0."""
    right, left = (comm.rank + 1) % comm.size, (comm.rank - 1) % comm.size
    got = [np.full(6, -1, dtype=np.int64) for _ in range(3)]
    works = [comm.isend(np.full(6, 10 * comm.rank + t, dtype=np.int64), right, tag=t)
             for t in (3, 4)]
    works.append(comm.isend(np.full(6, 10 * comm.rank + 9, dtype=np.int64), right))
    works += [comm.irecv(got[0], left, tag=3), comm.irecv(got[1], left, tag=4),
              comm.irecv(got[2], left, tag=0)]
    for w in works:
        w.wait()
    for g, t in zip(got, (3, 4, 9)):
        np.testing.assert_array_equal(g, np.full(6, 10 * left + t, dtype=np.int64))
    with pytest.raises(ValueError, match="tag -1 is negative"):
        obc.send(np.zeros(2), right, tag=-1)
    with pytest.raises(TypeError, match="tag must be an int"):
        obc.recv(np.zeros(2), left, tag=1.5)
    obc.barrier()


def test_any_source_takes_its_own_tag(comm):
    """Rank 0's message of tag 5 waits at the last rank while a receive
    from any source with tag 7 takes rank 1's message."""
    if comm.size < 3:
        pytest.skip("needs 3 ranks")
    last = comm.size - 1
    if comm.rank in (0, 1):
        if comm.rank == 1:
            time.sleep(0.1)
        obc.send(np.full(2, 100 + comm.rank, dtype=np.int32), last, tag=5 + 2 * comm.rank)
    elif comm.rank == last:
        seven, five = np.zeros(2, dtype=np.int32), np.zeros(2, dtype=np.int32)
        any7 = obc.irecv(seven, tag=7)
        assert obc.recv(five, 0, tag=5) == 0
        assert any7.source_rank() == 1
        assert seven.tolist() == [101, 101] and five.tolist() == [100, 100]
    obc.barrier()


def test_recv_from_any_source(comm):
    """recv/irecv with src=None: each rank in turn takes two messages from
    every other rank, in whatever order they come; the sender reported is
    the one whose values arrived."""
    for receiver in range(comm.size):
        if comm.rank != receiver:
            for _ in range(2):
                obc.send(np.full(5, comm.rank, dtype=np.int32), receiver)
            continue
        senders = []
        for i in range(2 * (comm.size - 1)):
            got = np.full(5, -1, dtype=np.int32)
            if i % 2:
                work = obc.irecv(got)
                sender = work.source_rank()
            else:
                sender = obc.recv(got)
            np.testing.assert_array_equal(got, np.full(5, sender, dtype=np.int32))
            senders.append(sender)
        assert sorted(senders) == sorted([r for r in range(comm.size) if r != comm.rank] * 2)
    # to self, and the named forms report their peer too
    x = np.arange(4, dtype=np.int64)
    y = np.zeros(4, dtype=np.int64)
    obc.send(x, comm.rank)
    assert obc.recv(y) == comm.rank
    np.testing.assert_array_equal(y, x)
    obc.send(x, comm.rank)
    assert obc.irecv(y, comm.rank).source_rank() == comm.rank
    with pytest.raises(ValueError, match="not a receive"):
        obc.isend(x, comm.rank).source_rank()
    with pytest.raises(ValueError, match="group defers"):
        with obc.group():
            obc.recv(y)
    obc.barrier()
