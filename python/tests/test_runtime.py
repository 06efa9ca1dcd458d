"""InputTransformer against numpy."""
import json

import numpy as np
import pytest

import iotx

ATTRS = ("1,1,1", "3,2048,2,128|0,3,2,1;768,768|1,0;", "input0,input1,input2")
PARAMS = [((6144, 256), np.float16), ((768, 768), np.float32), ((1, 128), "int32")]


def inputs():
    rng = np.random.default_rng(3)
    return [rng.standard_normal((6144, 256)).astype(np.float16),
            rng.standard_normal((768, 768)).astype(np.float32),
            rng.integers(0, 100, (1, 128), dtype=np.int32)]


def test_from_attributes_and_apply():
    t = iotx.InputTransformer.from_attributes(*ATTRS, PARAMS)
    assert t.num_inputs == 3
    assert [t.has_transpose(i) for i in range(3)] == [True, True, False]
    assert t.output_shape(0) == (3, 128, 2, 2048) and t.input_shape(2) == (1, 128)
    assert t.input_name(1) == "input1"
    assert t.describe(0).startswith('input 0 "input0"') and "transpose" in t.describe(0)
    assert "strategy" in t.describe(0) and "input1" not in t.describe(0)
    assert t.changes_layout(1) and not t.changes_layout(2)
    xs = inputs()
    want = [np.ascontiguousarray(xs[0].reshape(3, 2048, 2, 128).transpose(0, 3, 2, 1)),
            xs[1].T.copy(), xs[2]]
    for i in range(3):
        got = t.apply(i, xs[i])
        assert got.dtype == xs[i].dtype and np.array_equal(got, want[i])
    out = np.empty((768, 768), np.float32)
    assert t.apply(1, xs[1], out=out) is out and np.array_equal(out, want[1])
    assert np.array_equal(t.apply(1, np.asfortranarray(xs[1])), want[1])  # copied to C order first
    for got, w in zip(t.apply_all(xs), want):
        assert np.array_equal(got, w)


def test_from_json():
    spec = json.dumps([{"input_name": "w", "reshape": [768, 768], "transpose": [1, 0]},
                       {"input_name": "nowhere", "reshape": [4], "transpose": [0]}])
    params = [("ids", (1, 128), np.int32), {"name": "w", "shape": [768, 768], "dtype": "f4"}]
    with pytest.raises(iotx.Error) as e:
        iotx.InputTransformer.from_json(spec, params)
    assert e.value.code == "IOTX_E117"
    with pytest.warns(UserWarning, match="nowhere"):
        t = iotx.InputTransformer.from_json(spec.encode(), params, ignore_unmatched=True)
    assert [t.has_transpose(i) for i in range(2)] == [False, True]
    x = inputs()[1]
    assert np.array_equal(t.apply(1, x), x.T)


def test_errors():
    t = iotx.InputTransformer.from_attributes(*ATTRS, PARAMS)
    with pytest.raises(iotx.Error) as e:
        t.apply(3, inputs()[0])
    assert e.value.code == "IOTX_E402"
    with pytest.raises(iotx.Error) as e:
        t.apply(1, np.zeros((768, 767), np.float32))
    assert e.value.code == "IOTX_E401" and e.value.key == "input1"
    with pytest.raises(iotx.Error) as e:
        t.apply(1, np.zeros((768, 768), np.float64))
    assert e.value.code == "IOTX_E400"
    with pytest.raises(iotx.Error) as e:
        iotx.InputTransformer.from_attributes("1", "3,5|0,1", "", [((4, 4), np.float32)])
    assert e.value.code == "NCC_IHNW003"
    with pytest.raises(iotx.Error) as e:
        iotx.InputTransformer.from_attributes("1", "3,x|0", "", [((4, 4), np.float32)])
    assert e.value.code == "IOTX_E121"
    with pytest.raises(iotx.Error):
        t.apply_all(inputs()[:2])


def test_apply_all_takes_any_iterable_and_names_what_it_got():
    t = iotx.InputTransformer.from_attributes(*ATTRS, PARAMS)
    xs = inputs()
    from_list = t.apply_all(xs)
    from_generator = t.apply_all(x for x in xs)
    assert len(from_generator) == len(from_list)
    for got, want in zip(from_generator, from_list):
        assert np.array_equal(got, want)
    with pytest.raises(iotx.Error) as e:  # its rows were taken for the inputs
        t.apply_all(xs[1])
    assert e.value.code == "IOTX_E400" and "not one array" in str(e.value)
    with pytest.raises(iotx.Error) as e:
        t.apply_all(5)
    assert e.value.code == "IOTX_E400" and "not int" in str(e.value)
    with pytest.raises(iotx.Error) as e:
        iotx.InputTransformer.from_attributes(*ATTRS, PARAMS, threads="a")
    assert e.value.code == "IOTX_E400" and "threads" in str(e.value)
