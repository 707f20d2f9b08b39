# SPDX-License-Identifier: MIT
"""sync_module and check_consistency on torch models and plain tensors."""
import numpy as np
import pytest
from conftest import TORCH_DTYPES, torch

import obc


def model(seed, width=16):
    torch.manual_seed(seed)
    m = torch.nn.Sequential(torch.nn.Linear(8, width), torch.nn.BatchNorm1d(width),
                            torch.nn.ReLU(), torch.nn.Linear(width, 3))
    m(torch.randn(4, 8))  # moves BatchNorm's running statistics (buffers)
    return m


def test_sync_module_makes_every_rank_equal_to_src(comm):
    m = model(seed=100 + comm.rank)
    src = comm.size - 1
    reference = model(seed=100 + src)
    before = obc.check_consistency(m, src=src)
    if comm.size > 1:
        assert "0.weight" in before and "1.running_mean" in before
        assert all(ranks == [r for r in range(comm.size) if r != src] for ranks in before.values())
    obc.sync_module(m, src=src)
    assert obc.check_consistency(m, src=src) == {}
    for (name, a), (_, b) in zip(m.state_dict().items(), reference.state_dict().items()):
        assert torch.equal(a, b), name


def test_sync_module_many_small_buckets_and_progress(comm, capfd):
    m = model(seed=comm.rank, width=64)
    obc.sync_module(m, bucket_mb=0.001, progress=True)  # about one tensor per bucket
    assert obc.check_consistency(m) == {}
    err = capfd.readouterr().err
    if comm.rank == 0:
        assert "sync_module:" in err and "(100%)" in err
    else:
        assert "sync_module" not in err


def test_sync_module_every_dtype(comm):
    tensors = {str(d): torch.full((33,), comm.rank + 1).to(d) for d in TORCH_DTYPES}
    tensors["flag"] = torch.tensor([comm.rank == 0, True])
    obc.sync_module(tensors, src=0)
    assert all((t.to(torch.float64) == 1).all() for k, t in tensors.items() if k != "flag")
    assert tensors["flag"].tolist() == [True, True]


def test_sync_module_names_the_rank_whose_model_differs(comm):
    if comm.size < 2:
        pytest.skip("needs two ranks")
    m = model(seed=0, width=16 if comm.rank != 1 else 17)
    with pytest.raises(obc.Mismatch) as info:
        obc.sync_module(m)
    text = str(info.value)
    assert "rank 1 has '0.weight' shape (17, 8)" in text and "rank 0 has shape (16, 8)" in text
    assert "rank 2" not in text
    extra = {"a": torch.zeros(2)}
    if comm.rank == comm.size - 1:
        extra["b"] = torch.zeros(2)
    with pytest.raises(obc.Mismatch, match=f"rank {comm.size - 1} has 'b' which rank 0 does not"):
        obc.sync_module(extra)


def test_sync_module_refuses_bad_tensors(comm):
    with pytest.raises(ValueError, match="not contiguous"):
        obc.sync_module({"t": torch.zeros(4, 4).t()})
    with pytest.raises(ValueError, match="bucket_mb"):
        obc.sync_module(model(0), bucket_mb=0)


def test_check_consistency_numpy_list_and_single(comm):
    arrays = [np.arange(10.0), np.full(3, comm.rank % 2, dtype=np.int32)]
    got = obc.check_consistency(arrays)
    odd = [r for r in range(comm.size) if r % 2]
    assert got == ({"1": odd} if odd else {})
    assert obc.check_consistency(np.arange(5)) == {}
    assert obc.check_consistency(torch.zeros(4, 4).t()) == {}  # non-contiguous is hashed as is


def test_check_consistency_reports_shape_and_count_differences(comm):
    if comm.size < 2:
        pytest.skip("needs two ranks")
    shape = {"w": torch.zeros(4 if comm.rank else 5)}
    assert obc.check_consistency(shape) == {"w": list(range(1, comm.size))}
    count = [torch.zeros(2)] * (1 if comm.rank == 1 else 2)
    assert obc.check_consistency(count) == {"<number of tensors>": [1]}
