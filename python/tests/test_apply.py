"""iotx.apply against numpy's ascontiguousarray(a.reshape(R).transpose(P))."""
import gc
import sys
import threading

import numpy as np
import pytest

import iotx

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
          np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128,
          np.dtype("<V2"), np.dtype("V3"), np.dtype("V16")]


def reference(a, reshape, transpose):
    # np.array(order="C") rather than ascontiguousarray, which makes rank 0 into rank 1.
    return np.array(a.reshape(reshape).transpose(transpose), order="C")


def random_array(rng, shape, dtype):
    dtype = np.dtype(dtype)
    raw = rng.integers(0, 256, size=int(np.prod(shape, dtype=np.int64)) * dtype.itemsize,
                       dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def check(a, reshape, transpose, **kwargs):
    got = iotx.apply(a, reshape, transpose, **kwargs)
    want = reference(a, reshape, transpose)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.flags.c_contiguous
    assert got.tobytes() == want.tobytes()
    return got


def test_the_source_documents_example():
    a = np.arange(6144 * 256, dtype=np.float32).reshape(6144, 256)
    got = check(a, [3, 16, 128, 2, 2, 64], [0, 4, 5, 3, 1, 2])
    assert got.shape == (3, 2, 64, 2, 16, 128)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).str)
@pytest.mark.parametrize("rank", range(0, 9))
def test_every_dtype_and_rank(dtype, rank):
    rng = np.random.default_rng(rank * 101 + np.dtype(dtype).itemsize)
    shape = tuple(int(n) for n in rng.integers(1, 5 if rank > 5 else 7, size=rank))
    a = random_array(rng, shape, dtype)
    check(a, shape, list(rng.permutation(rank)))


def test_bfloat16_as_void2_keeps_its_dtype():
    bits = np.arange(64 * 48, dtype=np.uint16).reshape(64, 48)
    a = bits.view("<V2")
    got = check(a, [64, 48], [1, 0])
    assert got.dtype == np.dtype("<V2")
    assert np.array_equal(got.view(np.uint16), bits.T)


@pytest.mark.parametrize("make_view", [
    lambda a: a.T,
    lambda a: a[::2],
    lambda a: a[:, ::3],
    lambda a: a[::-1, 1::2],
    lambda a: a[5:40, 7:60],
    lambda a: np.broadcast_to(a[:1], a.shape),
], ids=["T", "rows_step", "cols_step", "reversed_and_stepped", "window", "broadcast"])
def test_strided_views_are_read_in_place(make_view):
    a = np.arange(64 * 96, dtype=np.float32).reshape(64, 96)
    v = make_view(a)
    assert not v.flags.c_contiguous
    check(v, v.shape, [1, 0])
    check(v, v.shape, [0, 1])


def test_a_reshape_across_a_stepped_axis_still_matches_numpy():
    a = np.arange(8 * 12 * 10, dtype=np.int16).reshape(8, 12, 10)[:, ::2, :]  # (8, 6, 10)
    check(a, [8, 3, 2, 10], [2, 0, 3, 1])  # splits the stepped axis: a view
    check(a, [48, 10], [1, 0])              # merges it with the axis before: numpy copies


def test_random_cases_against_numpy(rng_seed):
    """Cases no other test contains: random ranks, shapes, splits, perms, dtypes, views."""
    rng = np.random.default_rng(rng_seed)
    for _ in range(300):
        dtype = DTYPES[rng.integers(len(DTYPES))]
        rank = int(rng.integers(1, 6))
        shape = [int(n) for n in rng.integers(1, 9, size=rank)]
        a = random_array(rng, shape, dtype)
        if rng.random() < 0.3:
            axis = int(rng.integers(rank))
            a = np.flip(a, axis)
        if rng.random() < 0.3:
            a = a.transpose(rng.permutation(rank))
        # Split one axis when it factors, as the compiler's reshapes do.
        reshape = list(a.shape)
        i = int(rng.integers(rank))
        for f in (2, 3):
            if reshape[i] % f == 0 and reshape[i] > f:
                reshape[i:i + 1] = [f, reshape[i] // f]
                break
        check(a, reshape, list(rng.permutation(len(reshape))), threads=int(rng.integers(1, 3)))


def test_large_array_on_several_threads():
    a = np.random.default_rng(1).standard_normal((1024, 1536)).astype(np.float32)
    check(a, [1024, 3, 512], [1, 2, 0])
    check(a, [1024, 3, 512], [1, 2, 0], threads=1)


def test_out_is_written_and_returned():
    a = np.arange(24 * 16, dtype=np.float64).reshape(24, 16)
    out = np.empty((16, 24))
    got = iotx.apply(a, [24, 16], [1, 0], out=out)
    assert got is out
    assert np.array_equal(out, a.T)


def test_out_is_checked():
    a = np.arange(24 * 16, dtype=np.float32).reshape(24, 16)
    with pytest.raises(iotx.Error) as e:
        iotx.apply(a, [24, 16], [1, 0], out=np.empty((24, 16), np.float32))
    assert e.value.code == "IOTX_E401"
    with pytest.raises(iotx.Error) as e:
        iotx.apply(a, [24, 16], [1, 0], out=np.empty((16, 24), np.float64))
    assert e.value.code == "IOTX_E400" and "dtype" in str(e.value)
    with pytest.raises(iotx.Error) as e:
        iotx.apply(a, [24, 16], [1, 0], out=np.empty((24, 16), np.float32).T)
    assert e.value.code == "IOTX_E400" and "contiguous" in str(e.value)
    ro = np.empty((16, 24), np.float32)
    ro.flags.writeable = False
    with pytest.raises(iotx.Error, match="read-only"):
        iotx.apply(a, [24, 16], [1, 0], out=ro)
    buf = np.zeros(2 * 24 * 16, np.float32)
    with pytest.raises(iotx.Error, match="overlap") as e:
        iotx.apply(buf[:384].reshape(24, 16), [24, 16], [1, 0], out=buf[100:484].reshape(16, 24))
    assert e.value.code == "IOTX_E400"


def test_errors_carry_their_codes():
    a = np.zeros((6144, 256), np.float16)
    with pytest.raises(iotx.Error) as e:
        iotx.apply(a, [3, 16, 128, 2, 2, 32], [0, 4, 5, 3, 1, 2])
    assert e.value.code == "NCC_IHNW003" and isinstance(e.value, ValueError)
    assert "illegal static io reshape" in str(e.value)
    with pytest.raises(iotx.Error) as e:
        iotx.apply(a, [6144, 256], [0, 0])
    assert e.value.code == "IOTX_E110"
    with pytest.raises(iotx.Error) as e:
        iotx.apply(a, [-6144, -256], [1, 0])
    assert e.value.code == "IOTX_E111"
    with pytest.raises(iotx.Error) as e:
        iotx.apply(a, [6144, 256.0], [1, 0])
    assert e.value.code == "IOTX_E400" and "reshape" in str(e.value)
    with pytest.raises(iotx.Error):
        iotx.apply(a, [6144, 256], [1, 0], threads=0)
    with pytest.raises(iotx.Error) as e:
        iotx.apply(np.array([object()]), [1], [0])
    assert e.value.code == "IOTX_E400"


def test_buffer_protocol_objects_give_numpy_arrays():
    got = iotx.apply(bytearray(range(12)), [3, 4], [1, 0])
    assert isinstance(got, np.ndarray)
    assert np.array_equal(got, np.arange(12, dtype=np.uint8).reshape(3, 4).T)


class DLPackOnly:
    """Only __dlpack__ / __dlpack_device__: no buffer protocol, not a numpy array."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack_objects(monkeypatch):
    a = np.arange(48 * 32, dtype=np.float32).reshape(48, 32)
    made = []
    module = sys.modules[__name__]
    monkeypatch.setattr(module, "from_dlpack", lambda x: made.append(x) or np.from_dlpack(x),
                        raising=False)
    got = iotx.apply(DLPackOnly(a), [48, 32], [1, 0])
    assert made, "the result goes back through the caller's module's from_dlpack"
    assert np.array_equal(np.asarray(got), a.T)
    # numpy's own DLPack round trip: a view, read in place.
    check(np.from_dlpack(a[::2]), [24, 32], [1, 0])


def test_threads_calling_apply_at_once():
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal((256, 384)).astype(np.float32) for _ in range(8)]
    expected = [a.T.copy() for a in arrays]
    failures = []

    def work(k):
        for _ in range(25):
            got = iotx.apply(arrays[k], [256, 384], [1, 0])
            if not np.array_equal(got, expected[k]):
                failures.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_no_reference_leaks_over_many_calls():
    a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    out = np.empty((64, 64), np.float32)
    for _ in range(100):
        iotx.apply(a, [64, 64], [1, 0])
    gc.collect()
    before_a, before_out = sys.getrefcount(a), sys.getrefcount(out)
    blocks = sys.getallocatedblocks()
    for _ in range(5000):
        iotx.apply(a, [64, 64], [1, 0])
        iotx.apply(a.T, [64, 64], [1, 0], out=out)
        try:
            iotx.apply(a, [64, 65], [1, 0])
        except iotx.Error:
            pass
    gc.collect()
    assert sys.getrefcount(a) == before_a
    assert sys.getrefcount(out) == before_out
    assert sys.getallocatedblocks() - blocks < 100  # 15000 calls: no per-call Python object kept


def test_torch_tensors_when_torch_is_installed():
    torch = pytest.importorskip("torch")
    t = torch.arange(6144 * 256, dtype=torch.float32).reshape(6144, 256)
    got = iotx.apply(t, [3, 2048, 2, 128], [0, 3, 2, 1])
    assert isinstance(got, torch.Tensor)
    want = t.reshape(3, 2048, 2, 128).permute(0, 3, 2, 1).contiguous()
    assert torch.equal(got, want)
    out = torch.empty(want.shape, dtype=torch.float32)
    assert iotx.apply(t.T, [256, 6144], [1, 0], out=out) is out
    assert torch.equal(out, t)


@pytest.mark.parametrize("threads", ["2", 2.5, True, [2]])
def test_threads_that_are_not_ints_are_iotx_errors(threads):
    a = np.zeros((4, 6), np.float32)
    with pytest.raises(iotx.Error) as e:
        iotx.apply(a, [4, 6], [1, 0], threads=threads)
    assert e.value.code == "IOTX_E400" and "threads must be an int" in str(e.value)


def test_threads_past_the_machine_mean_every_core():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    for threads in (2**70, np.int64(3)):
        assert np.array_equal(iotx.apply(a, [4, 6], [1, 0], threads=threads), a.T)


def test_bytes_are_bytes():
    # np.asarray(bytes) is one 0-d string element; bytes have the buffer protocol like
    # bytearray, so they are read as uint8 (a view, no copy).
    got = iotx.apply(bytes(range(12)), [3, 4], [1, 0])
    assert got.dtype == np.uint8 and np.array_equal(got, np.arange(12, dtype=np.uint8).reshape(3, 4).T)


class Exporter(DLPackOnly):
    """A DLPack exporter whose module (this test file's) has no from_dlpack."""


def test_dlpack_objects_of_a_module_without_from_dlpack_give_numpy_arrays():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert not hasattr(sys.modules[Exporter.__module__], "from_dlpack")
    got = iotx.apply(Exporter(a), [3, 4], [1, 0])
    assert isinstance(got, np.ndarray) and np.array_equal(got, a.T)
