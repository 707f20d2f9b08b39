# SPDX-License-Identifier: MIT
"""broadcast(wire_dtype=) (obc_broadcast_as), obc.empty (obc_mem_alloc) and
sync_module's wire_dtype= and shared=."""
import gc
import os

import numpy as np
import pytest
from conftest import torch

import obc


def values(n, seed):
    """float32 values that exercise the rounding: random magnitudes, ties,
    NaN, infinities, beyond float16's range."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))).astype(np.float32)
    special = np.array([1.00390625, 1.01171875, np.nan, np.inf, -np.inf, 65520.0, 1e30, -0.0,
                        2.0**-24 * 1.5], dtype=np.float32)
    x[:min(n, len(special))] = special[:n]
    return x


def as_wire(x, wire):
    """x (float32) rounded to the wire dtype by torch (an independent
    reference) and widened back."""
    t = torch.from_numpy(x.copy())
    return t.to(wire).to(torch.float32).numpy()


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    nan = np.isnan(a) & np.isnan(b)
    return bool(((a.view(np.uint32) == b.view(np.uint32)) | nan).all())


@pytest.mark.parametrize("wire", [torch.bfloat16, torch.float16, "bfloat16", np.float16])
@pytest.mark.parametrize("n", [0, 1, 1001, (1 << 19) + 3])
def test_broadcast_wire_dtype_rounds_once_on_every_rank(comm, wire, n):
    src = comm.size - 1
    ref = values(n, seed=n)
    torch_wire = {"bfloat16": torch.bfloat16, np.float16: torch.float16}.get(wire, wire)
    want = as_wire(ref, torch_wire)
    as_tensor = n % 2 == 1
    buf = ref.copy() if comm.rank == src else np.zeros(n, dtype=np.float32)
    if as_tensor:
        buf = torch.from_numpy(buf)
    obc.broadcast(buf, src=src, wire_dtype=wire)
    got = buf.numpy() if as_tensor else buf
    assert same_bits(got, want)
    hashes = np.empty(comm.size, dtype=np.uint64)
    comm.all_gather(hashes, np.array([obc.comm.hash_buffer(got)], dtype=np.uint64))
    assert (hashes == hashes[0]).all()  # bit-identical, NaNs included


def test_wire_dtype_errors(comm):
    with pytest.raises(obc.InvalidArgument):
        obc.broadcast(np.zeros(4, dtype=np.float64), wire_dtype=torch.bfloat16)
    with pytest.raises(TypeError):
        obc.broadcast(np.zeros(4, dtype=np.float32), wire_dtype="float8")
    with pytest.raises(ValueError):
        obc.broadcast(np.zeros(4, dtype=np.float32), wire_dtype="bfloat16", async_op=True)
    x = np.arange(4, dtype=np.float32) + comm.rank  # wire == dtype: a plain broadcast
    obc.broadcast(x, src=0, wire_dtype=np.float32)
    assert (x == np.arange(4)).all()


def test_empty_numpy_and_torch(comm):
    a = obc.empty((3, 5), np.float64)
    assert isinstance(a, np.ndarray) and a.shape == (3, 5) and a.dtype == np.float64
    assert a.ctypes.data % 4096 == 0 and (a == 0).all()
    a[:] = comm.rank + 1
    obc.broadcast(a, src=0)
    assert (a == 1).all()
    t = obc.empty(7, torch.bfloat16)
    assert isinstance(t, torch.Tensor) and t.dtype == torch.bfloat16 and t.shape == (7,)
    u = obc.empty([2, 2], torch.float32, like=torch)
    u.fill_(comm.rank)
    obc.all_reduce(u)
    assert (u == comm.size * (comm.size - 1) / 2).all()
    v = obc.empty(4, np.int32, like=torch.zeros(1))
    assert isinstance(v, torch.Tensor) and v.dtype == torch.int32
    z = obc.empty(0, np.float32)
    assert z.size == 0


def open_fds():
    """The obc blocks this process holds open: memfds named obc-mem. Only
    those, because gc.collect() and background threads (torch's stores,
    earlier tests' objects) may close other fds while the test runs."""
    import os
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("/memfd:obc-mem")
        except OSError:
            pass  # closed since the listing
    return count


def test_empty_is_freed_with_the_array(comm):
    gc.collect()
    before = open_fds()
    arrays = [obc.empty(1000, np.float32) for _ in range(10)]
    views = arrays[0][10:20]  # a view keeps its block
    assert open_fds() == before + 10
    del arrays
    gc.collect()
    assert open_fds() == before + 1
    views[:] = 3.0  # still mapped
    del views
    gc.collect()
    assert open_fds() == before


def test_empty_of_a_destroyed_communicator_frees_nothing_twice(fresh_comm):
    a = fresh_comm.empty(100, np.float32)
    fresh_comm.destroy()  # frees the block; the array must not be used any more
    del a
    gc.collect()  # the finaliser sees the communicator gone and does nothing


def model(seed):
    torch.manual_seed(seed)
    m = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.BatchNorm1d(32),
                            torch.nn.Linear(32, 3))
    m(torch.randn(4, 8))
    return m


def test_sync_module_wire_dtype(comm):
    m, ref = model(comm.rank), model(0)
    obc.sync_module(m, src=0, wire_dtype=torch.bfloat16)
    for (name, a), (_, b) in zip(m.state_dict().items(), ref.state_dict().items()):
        if b.dtype == torch.float32:
            assert torch.equal(a, b.to(torch.bfloat16).to(torch.float32)), name
        else:
            assert torch.equal(a, b), name  # num_batches_tracked (int64) travels as it is
    assert obc.check_consistency(m) == {}


def test_sync_module_shared(comm):
    m, ref = model(comm.rank + 10), model(10)
    obc.sync_module(m, src=0, shared=True)
    for (name, a), (_, b) in zip(m.state_dict().items(), ref.state_dict().items()):
        assert torch.equal(a, b), name
    w = m[0].weight
    assert w.data_ptr() % 4096 == 0  # moved into an obc_mem_alloc block
    out = m(torch.randn(2, 8))  # the module still works
    out.sum().backward()
    assert w.grad is not None
    with pytest.raises(ValueError):
        obc.sync_module([np.zeros(3, dtype=np.float32)], shared=True)


def peer_block_mappings():
    """Read-only shared mappings of peers' obc_mem_alloc blocks here: what a
    reader holds once it copied a broadcast straight out of the root's."""
    with open("/proc/self/maps") as f:
        return sum(" r--s " in line and "memfd:obc-mem" in line for line in f)


def test_sync_module_shared_places_one_block_that_readers_map(comm):
    big = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.LayerNorm(1024),
                              torch.nn.Linear(1024, 3))  # 2.1 MiB: above OBC_MAPPED_MIN_BYTES
    with torch.no_grad():
        for i, p in enumerate(big.parameters()):
            p.fill_(comm.rank * 10 + i)
    obc.sync_module(big, src=0, shared=True)
    params = list(big.parameters())
    for i, p in enumerate(params):
        assert bool((p == i).all()), i
    starts = [p.data_ptr() for p in params]
    ends = [p.data_ptr() + p.numel() * p.element_size() for p in params]
    assert all(s % 64 == 0 for s in starts)
    assert max(ends) - min(starts) < sum(e - s + 64 for s, e in zip(starts, ends))  # one slab
    with torch.no_grad():
        for p in params:
            p.add_(comm.rank + 1)
    obc.sync_module(big, src=0)  # again, from the shared slab now
    for i, p in enumerate(params):
        assert bool((p == i + 1).all()), i
    one_host = "OBC_HOST_ID" not in os.environ and os.environ.get("OBC_CMA", "1") != "0"
    if comm.size > 1 and comm.rank != 0 and one_host:
        assert peer_block_mappings() >= 1
