# SPDX-License-Identifier: MIT
"""broadcast_object and all_gather_object, and broadcast_object's memory."""
import tracemalloc

import numpy as np
import pytest
from conftest import torch

import obc
from obc import objects


@pytest.mark.parametrize("src_of", [lambda n: 0, lambda n: n - 1], ids=["first", "last"])
def test_broadcast_object_roundtrip(comm, src_of):
    src = src_of(comm.size)
    mine = {"rank": comm.rank, "cfg": {"lr": 0.1 * comm.rank, "layers": [comm.rank] * 3},
            "t": torch.arange(5) * comm.rank, "a": np.full(4, comm.rank, dtype=np.float16)}
    got = obc.broadcast_object(mine, src=src)
    assert got["rank"] == src and got["cfg"]["layers"] == [src] * 3
    assert (got["t"] == torch.arange(5) * src).all() and (got["a"] == src).all()
    if comm.rank == src:
        assert got is mine


def test_broadcast_object_empty_and_none(comm):
    assert obc.broadcast_object(None) is None
    assert obc.broadcast_object(b"" if comm.rank == 0 else b"x") == b""


def test_broadcast_object_streams_chunks(comm, monkeypatch):
    monkeypatch.setattr(objects, "CHUNK_BYTES", 1000)  # many chunks, last one partial
    payload = bytes(range(256)) * 40 if comm.rank == 0 else None
    assert obc.broadcast_object(payload) == bytes(range(256)) * 40


def traced_peak(fn):
    """fn()'s result and the peak of Python-level allocations during it
    (tracemalloc; NumPy reports its data buffers there too)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = fn()
        return result, tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


SLACK = 1 << 20


def test_broadcast_object_sends_arrays_from_their_own_memory(comm):
    """NumPy payloads travel out of band: the root allocates nothing of
    their size; a receiver only the arrays it returns."""
    nbytes = 32 << 20
    obj = {"w": np.full(nbytes, 7, dtype=np.uint8), "b": np.ones(1000)} if comm.rank == 0 else None
    got, peak = traced_peak(lambda: obc.broadcast_object(obj))
    assert (got["w"] == 7).all() and (got["b"] == 1).all()
    got["w"][0] = 1  # a receiver's arrays are its own, writable memory
    if comm.rank == 0:
        assert peak <= SLACK, f"root peak {peak}: the {nbytes}-byte array was copied"
    else:
        assert peak <= nbytes + 8000 + SLACK, f"receiver peak {peak} for a {nbytes}-byte object"


def test_broadcast_object_memory_is_the_pickle_once(comm):
    """In-band payloads (bytes, str, lists): the pickle once on every rank,
    plus the object a receiver returns. torch's broadcast_object_list holds
    the pickle twice."""
    nbytes = 32 << 20
    obj = [b"x" * (nbytes // 4) for _ in range(4)] if comm.rank == 0 else None
    got, peak = traced_peak(lambda: obc.broadcast_object(obj))
    assert got == [b"x" * (nbytes // 4)] * 4
    growth = nbytes // 4  # the pickler's own output buffer grows ahead of what it holds
    if comm.rank == 0:
        assert peak <= nbytes + growth, f"root peak {peak} for a {nbytes}-byte pickle"
    else:
        assert peak <= 2 * nbytes + SLACK, f"receiver peak {peak}: pickle + object is {2 * nbytes}"


def test_all_gather_object(comm):
    got = obc.all_gather_object({"r": comm.rank, "pad": "x" * (comm.rank * 100)})
    assert [g["r"] for g in got] == list(range(comm.size))
    assert [len(g["pad"]) for g in got] == [r * 100 for r in range(comm.size)]
