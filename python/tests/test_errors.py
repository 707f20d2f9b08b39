# SPDX-License-Identifier: MIT
"""Bad input raises a clear Python exception before anything moves; obc's
own failures raise obc.ObcError subclasses carrying obc's message."""
import numpy as np
import pytest
from conftest import torch

import obc


def test_non_contiguous_tensor(comm):
    with pytest.raises(ValueError, match="not contiguous"):
        obc.all_reduce(torch.zeros(4, 6)[:, ::2])
    with pytest.raises(ValueError, match="not contiguous"):
        obc.broadcast(np.zeros((4, 6))[:, ::2])


def test_tensor_on_another_device(comm):
    with pytest.raises(ValueError, match="device 'meta'.*CPU"):
        obc.broadcast(torch.empty(8, device="meta"))


@pytest.mark.parametrize("bad", [torch.zeros(3, dtype=torch.bool),
                                 torch.zeros(3, dtype=torch.int16),
                                 torch.zeros(3, dtype=torch.complex64),
                                 np.zeros(3, dtype=np.int16), np.zeros(3, dtype=np.bool_)],
                         ids=lambda t: str(t.dtype))
def test_dtype_obc_cannot_reduce(comm, bad):
    with pytest.raises(TypeError, match="not one obc can reduce"):
        obc.all_reduce(bad)


def test_not_an_array(comm):
    with pytest.raises(TypeError, match="NumPy array or a CPU torch tensor, got list"):
        obc.all_reduce([1.0, 2.0])
    with pytest.raises(TypeError, match="Python objects"):
        obc.broadcast(np.array([object()]))


def test_read_only_array_written(comm):
    ro = np.zeros(4, dtype=np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        obc.all_reduce(ro)
    if comm.size > 1:  # bytes are fine to send, not to receive into
        with pytest.raises(ValueError, match="read-only"):
            obc.broadcast(b"abcd", src=(comm.rank + 1) % comm.size)


def test_bad_ranks_and_ops(comm):
    x = np.zeros(4, dtype=np.float32)
    for root in (-1, comm.size, 1.5, "0"):
        with pytest.raises(ValueError, match="not a rank"):
            obc.broadcast(x, src=root)
    with pytest.raises(ValueError, match="not a rank"):
        obc.reduce(x, dst=comm.size)
    with pytest.raises(ValueError, match="not an obc.ReduceOp"):
        obc.all_reduce(x, op=17)


def test_shape_errors_of_gather_and_scatter(comm):
    x = torch.zeros(3)
    with pytest.raises(ValueError, match="one per rank"):
        obc.all_gather([torch.zeros(3)] * (comm.size + 1), x)
    with pytest.raises(ValueError, match="shaped"):
        obc.all_gather([torch.zeros(4)] * comm.size, x)
    with pytest.raises(ValueError, match="needs"):
        obc.all_gather(torch.zeros(3 * comm.size + 1), x)
    with pytest.raises(TypeError, match="differ in type"):
        obc.all_gather(torch.zeros(3 * comm.size, dtype=torch.float64), x)
    with pytest.raises(ValueError, match="needs"):
        obc.reduce_scatter(torch.zeros(2), torch.zeros(2 * comm.size + 2))


def test_list_output_refused_inside_group(comm):
    with pytest.raises(ValueError, match="group"):
        with obc.group():
            obc.all_gather([torch.zeros(1)] * comm.size, torch.zeros(1))


def test_error_classes_derive_from_builtin_ones():
    assert issubclass(obc.Timeout, TimeoutError) and issubclass(obc.Timeout, obc.ObcError)
    assert issubclass(obc.PeerLost, ConnectionError)
    assert issubclass(obc.InvalidArgument, ValueError)
    e = obc.Timeout("broadcast #3: rank 2 did not arrive", 4)
    assert str(e) == "broadcast #3: rank 2 did not arrive" and e.code == 4


def test_every_result_code_has_its_class():
    """The classes take their codes from the library's table (obc_result_name);
    what is left copied is each class's identifier: this fails if the two drift."""
    from obc import _native, errors
    lib_errors = {n: v for n, v in _native.RESULTS.items() if n.startswith("OBC_ERR_")}
    classes = {cls.result: cls for cls in errors._CLASSES}
    assert set(classes) == set(lib_errors)
    for name, value in lib_errors.items():
        assert classes[name].code == value
        assert type(errors.from_status(value, "m")) is classes[name]
    assert _native.RESULTS["OBC_SUCCESS"] == 0
    assert _native.IN_PROGRESS == _native.RESULTS["OBC_IN_PROGRESS"]
    assert type(errors.from_status(999, "m")) is obc.ObcError


def test_init_twice_and_use_after_destroy(comm):
    with pytest.raises(RuntimeError, match="already initialised"):
        obc.init()
    uid = obc.broadcast_object(obc.get_unique_id() if comm.rank == 0 else None)
    c = obc.Communicator(rank=comm.rank, size=comm.size, unique_id=uid)
    c.destroy()
    with pytest.raises(ValueError, match="destroyed"):
        c.all_reduce(np.zeros(1))
    with pytest.raises(ValueError, match="128 bytes"):
        obc.Communicator(rank=0, size=1, unique_id=b"short")


def test_bad_bootstrap_id_is_an_obc_error(comm):
    with pytest.raises(obc.InvalidArgument, match="rank"):
        obc.Communicator(rank=5, size=2, unique_id=bytes(128))


def test_count_mismatch_raises_mismatch_naming_ranks(comm, fresh_comm):
    if comm.size < 2:
        pytest.skip("needs two ranks")
    x = np.zeros(10 + (comm.rank == 1), dtype=np.float32)
    with pytest.raises(obc.Mismatch, match=r"rank \d") as info:
        fresh_comm.all_reduce(x)
    assert info.value.code == 6 and "rank" in str(info.value)


def test_abort_fails_the_others(comm, fresh_comm):
    if comm.size < 2:
        pytest.skip("needs two ranks")
    if comm.rank == 0:
        fresh_comm.abort()
        with pytest.raises(obc.Aborted):
            fresh_comm.barrier()
    else:
        with pytest.raises((obc.Aborted, obc.PeerLost)) as info:
            fresh_comm.all_reduce(np.zeros(1 << 16, dtype=np.float32))
        assert "rank 0" in str(info.value)
    comm.barrier()
