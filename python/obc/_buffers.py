# SPDX-License-Identifier: MIT
"""From a NumPy array or CPU torch tensor to what the C API takes: a
pointer, an element count and an obc dtype, without copying.

The one place that decides which arrays obc accepts and what the error says
when it does not: a tensor on another device, a non-contiguous view, a
read-only array written to, or an element type obc cannot reduce.
Broadcast and allgather only move bytes, so any element type obc does not
know (bool, int16, complex, ...) travels as uint8 there.
"""
import sys
from collections import namedtuple

import numpy as np

from . import _native as N

# What C sees: ptr (int), count (elements of dtype), dtype (obc_dtype_t),
# nbytes, and the object that owns the memory (kept alive by the caller).
Buffer = namedtuple("Buffer", "ptr count dtype nbytes owner")

_NUMPY = {
    np.dtype(np.int8): N.INT8,
    np.dtype(np.uint8): N.UINT8,
    np.dtype(np.int32): N.INT32,
    np.dtype(np.uint32): N.UINT32,
    np.dtype(np.int64): N.INT64,
    np.dtype(np.uint64): N.UINT64,
    np.dtype(np.float16): N.FLOAT16,
    np.dtype(np.float32): N.FLOAT32,
    np.dtype(np.float64): N.FLOAT64,
}

_TORCH = None  # filled on first use, so `import obc` does not import torch


def _torch_table(torch):
    global _TORCH
    if _TORCH is None:
        names = {"int8": N.INT8, "uint8": N.UINT8, "int32": N.INT32, "uint32": N.UINT32,
                 "int64": N.INT64, "uint64": N.UINT64, "float16": N.FLOAT16,
                 "bfloat16": N.BFLOAT16, "float32": N.FLOAT32, "float64": N.FLOAT64}
        _TORCH = {getattr(torch, n): v for n, v in names.items() if hasattr(torch, n)}
    return _TORCH


def is_tensor(obj):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


def _from_tensor(t, what, writable, any_dtype):
    import torch
    if t.device.type != "cpu":
        raise ValueError(f"{what}: the tensor is on device '{t.device}'; obc moves CPU memory "
                         f"only (call .cpu() first)")
    if t.layout != torch.strided:
        raise ValueError(f"{what}: the tensor's layout is {t.layout}; obc needs a dense "
                         f"(strided) tensor")
    if not t.is_contiguous():
        raise ValueError(f"{what}: the tensor is not contiguous (shape {tuple(t.shape)}, "
                         f"strides {t.stride()}); pass t.contiguous() and copy the result back")
    dtype = _torch_table(torch).get(t.dtype)
    nbytes = t.numel() * t.element_size()
    if dtype is None:
        if not any_dtype:
            raise TypeError(f"{what}: dtype {t.dtype} is not one obc can reduce "
                            f"(int8, uint8, int32, int64, float16, bfloat16, float32, float64)")
        return Buffer(t.data_ptr(), nbytes, N.UINT8, nbytes, t)
    return Buffer(t.data_ptr(), t.numel(), dtype, nbytes, t)


def _from_array(a, what, writable, any_dtype):
    if not (a.flags.c_contiguous or a.flags.f_contiguous):
        raise ValueError(f"{what}: the array is not contiguous (shape {a.shape}, strides "
                         f"{a.strides}); pass np.ascontiguousarray(a) and copy the result back")
    if writable and not a.flags.writeable:
        raise ValueError(f"{what}: the array is read-only and this call writes into it")
    dtype = _NUMPY.get(a.dtype)
    ptr = a.__array_interface__["data"][0]
    if a.dtype.hasobject:
        raise TypeError(f"{what}: the array holds Python objects (dtype {a.dtype}); obc moves "
                        f"raw memory (use broadcast_object for objects)")
    if dtype is None:
        if not any_dtype:
            raise TypeError(f"{what}: dtype {a.dtype} is not one obc can reduce "
                            f"(int8, uint8, int32, uint32, int64, uint64, float16, float32, "
                            f"float64)")
        return Buffer(ptr, a.nbytes, N.UINT8, a.nbytes, a)
    return Buffer(ptr, a.size, dtype, a.nbytes, a)


def as_buffer(obj, what, *, writable=True, any_dtype=False):
    """The Buffer of obj (a torch tensor, a NumPy array, or any object with
    the buffer protocol, such as bytearray). writable: the call writes into
    it. any_dtype: the call only moves bytes, so unknown types go as uint8."""
    if is_tensor(obj):
        return _from_tensor(obj, what, writable, any_dtype)
    if isinstance(obj, np.ndarray):
        return _from_array(obj, what, writable, any_dtype)
    try:
        view = memoryview(obj)
    except TypeError:
        raise TypeError(f"{what}: expected a NumPy array or a CPU torch tensor, got "
                        f"{type(obj).__name__}") from None
    if writable and view.readonly:
        raise ValueError(f"{what}: the {type(obj).__name__} is read-only and this call writes "
                         f"into it")
    if not view.contiguous:
        raise ValueError(f"{what}: the {type(obj).__name__} is not contiguous")
    array = np.frombuffer(view, dtype=np.uint8)
    return _from_array(array, what, False, any_dtype)


_DTYPE_NAMES = {"int8": N.INT8, "uint8": N.UINT8, "int32": N.INT32, "uint32": N.UINT32,
                "int64": N.INT64, "uint64": N.UINT64, "float16": N.FLOAT16,
                "bfloat16": N.BFLOAT16, "float32": N.FLOAT32, "float64": N.FLOAT64}


def obc_dtype(d, what):
    """The obc dtype of d: a torch dtype, a NumPy dtype (or type), or a
    name ("bfloat16", which NumPy lacks, "float16", ...)."""
    if isinstance(d, str) and d in _DTYPE_NAMES:
        return _DTYPE_NAMES[d]
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(d, torch.dtype):
        found = _torch_table(torch).get(d)
    else:
        try:
            found = _NUMPY.get(np.dtype(d))
        except TypeError:
            found = None
    if found is None:
        raise TypeError(f"{what}: {d!r} is not an obc dtype (a torch or NumPy dtype, or one of "
                        f"{', '.join(_DTYPE_NAMES)})")
    return found


def torch_dtype(obc_dt):
    """The torch dtype of an obc dtype (None where torch has none)."""
    import torch
    for t, v in _torch_table(torch).items():
        if v == obc_dt:
            return t
    return None


def numpy_dtype(obc_dt):
    """The NumPy dtype of an obc dtype (None for bfloat16)."""
    for d, v in _NUMPY.items():
        if v == obc_dt:
            return d
    return None


def empty_like(obj, count):
    """A new 1-D buffer of the same kind and dtype as obj, count elements."""
    if is_tensor(obj):
        import torch
        return torch.empty(count, dtype=obj.dtype)
    return np.empty(count, dtype=obj.dtype)


def flat(obj):
    """A 1-D view of a contiguous array or tensor (no copy)."""
    if is_tensor(obj):
        return obj.view(-1)
    return obj.reshape(-1)


def same_type(a, b, what):
    """Check that a and b are the same kind of array with the same dtype."""
    if is_tensor(a) != is_tensor(b) or a.dtype != b.dtype:
        raise TypeError(f"{what}: input and output differ in type ({type(a).__name__} "
                        f"{a.dtype} vs {type(b).__name__} {b.dtype})")
