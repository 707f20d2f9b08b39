# SPDX-License-Identifier: MIT
"""pytest for the obc package, run by every rank under obcrun (or torchrun):
    obcrun -n 4 /usr/bin/python3 -m pytest -q -p no:cacheprovider python/tests
Every rank collects the same tests in the same order, so their collectives
match. A test that must break a communicator makes its own (fresh_comm)."""
import numpy as np
import pytest

import obc

torch = pytest.importorskip("torch")

# Every dtype obc has, per array kind (NumPy has no bfloat16; torch 1.x no uint32/64).
NUMPY_DTYPES = [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.float16,
                np.float32, np.float64]
TORCH_DTYPES = [d for d in (torch.int8, torch.uint8, torch.int32, getattr(torch, "uint32", None),
                            torch.int64, getattr(torch, "uint64", None), torch.float16,
                            torch.bfloat16, torch.float32, torch.float64) if d is not None]
KINDS = [("numpy", d) for d in NUMPY_DTYPES] + [("torch", d) for d in TORCH_DTYPES]


def kind_id(k):
    return f"{k[0]}-{np.dtype(k[1]).name if k[0] == 'numpy' else str(k[1])[6:]}"


def make(kind, values):
    """values (a float64 NumPy array) as an array/tensor of kind (exact for
    the small integers the tests use)."""
    lib, dtype = kind
    if lib == "numpy":
        return np.asarray(values).astype(dtype)
    return torch.tensor(np.asarray(values, dtype=np.float64)).to(dtype)


def as_f64(x):
    if isinstance(x, np.ndarray):
        return (x.real if np.iscomplexobj(x) else x).astype(np.float64)
    return x.to(torch.float64).numpy()


@pytest.fixture(scope="session")
def comm():
    if not obc.is_initialized():
        obc.init()
    return obc.default_comm()


@pytest.fixture
def fresh_comm(comm):
    """A second communicator over the same ranks, for tests that break it."""
    uid = obc.broadcast_object(obc.get_unique_id() if comm.rank == 0 else None, src=0)
    c = obc.Communicator(rank=comm.rank, size=comm.size, unique_id=uid, timeout=20)
    yield c
    c.destroy()
