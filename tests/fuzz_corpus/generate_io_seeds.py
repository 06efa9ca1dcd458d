#!/usr/bin/env python3
"""Writes the seed corpora of the tensor-file fuzzers (npy/, pickle/, safetensors/).

Run from anywhere with Debian's python3-numpy: python3 tests/fuzz_corpus/generate_io_seeds.py
The files are committed; rerunning rewrites them (the content is deterministic).
"""
import io
import json
import os
import pickle
import struct
import sys
import types

import numpy as np
from numpy.lib import format as npformat

HERE = os.path.dirname(os.path.abspath(__file__))


def save(kind, name, data):
    os.makedirs(os.path.join(HERE, kind), exist_ok=True)
    with open(os.path.join(HERE, kind, name), 'wb') as f:
        f.write(data)


def npy_bytes(array, version=None):
    buf = io.BytesIO()
    npformat.write_array(buf, array, version=version)
    return buf.getvalue()


def raw_npy(header, data=b'', major=1):
    length = struct.pack('<H' if major == 1 else '<I', len(header))
    return b'\x93NUMPY' + bytes([major, 0]) + length + header.encode('latin1') + data


rng = np.random.default_rng(9)
small = np.arange(6, dtype='<f4').reshape(2, 3)

# --- npy
save('npy', 'f4_2x3.npy', npy_bytes(small))
save('npy', 'u1_fortran.npy', npy_bytes(np.asfortranarray(np.arange(12, dtype='u1').reshape(3, 4))))
save('npy', 'be_i8.npy', npy_bytes(np.arange(3, dtype='>i8')))
save('npy', 'be_c8_fortran.npy', npy_bytes(np.asfortranarray(np.ones((2, 2), dtype='>c8'))))
save('npy', 'scalar_f8.npy', npy_bytes(np.array(1.5)))
save('npy', 'empty.npy', npy_bytes(np.zeros((0, 3), dtype='<i2')))
save('npy', 'bool.npy', npy_bytes(np.array([True, False, True])))
save('npy', 'v2.npy', npy_bytes(small, (2, 0)))
save('npy', 'v3.npy', npy_bytes(small, (3, 0)))
save('npy', 'bf16_V2.npy', npy_bytes(np.zeros(4, dtype='V2')).replace(b"'|V2'", b"'<V2'"))
save('npy', 'U3.npy', npy_bytes(np.array(['ab', 'c'], dtype='<U3')))
save('npy', 'M8.npy', npy_bytes(np.zeros(2, dtype='<M8[ns]')))
save('npy', 'keys_reordered.npy',
     raw_npy("{\"shape\": (2L,), 'fortran_order': True, 'descr': u'<f2',}\n", b'abcd'))
save('npy', 'bad_truncated.npy', npy_bytes(small)[:-3])
save('npy', 'bad_object.npy', raw_npy("{'descr': '|O', 'fortran_order': False, 'shape': ()}"))
save('npy', 'bad_struct.npy',
     raw_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", b'abcd'))
save('npy', 'bad_huge_shape.npy',
     raw_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4)}"))

# --- pickle
arrays = {
    'x': small,
    'mask': np.array([True, False]),
    'ids': np.arange(4, dtype='<i8'),
    'fortran': np.asfortranarray(np.arange(6, dtype='<i2').reshape(2, 3)),
    'strided': np.arange(12, dtype='u1').reshape(3, 4)[::2, 1::2],
    'big_endian': np.arange(3, dtype='>f4'),
    'bf16': np.zeros(2, dtype='V2'),
    'scalar': np.array(3, dtype='<u2'),
    'empty': np.zeros((0,), dtype='<f8'),
}
for p in (2, 3, 4, 5):
    save('pickle', f'arrays_p{p}.p', pickle.dumps(arrays, protocol=p))
save('pickle', 'one_item_p2.p', pickle.dumps({'a': small}, protocol=2))
# A large payload sits outside CPython's frames; cut it short (the reader must say truncated).
save('pickle', 'frames_p4_cut.p',
     pickle.dumps({'big': np.zeros(70000, dtype='u1')}, protocol=4)[:300])


# numpy 2 spells the modules numpy._core; stand-ins make pickle write that spelling.
def respelled(obj, protocol, korder=None):
    fakes = {}
    for func, (module, name) in {
            np.core.multiarray._reconstruct: ('numpy._core.multiarray', '_reconstruct'),
            np.core.numeric._frombuffer: ('numpy._core.numeric', '_frombuffer')}.items():
        mod = sys.modules.setdefault(module, types.ModuleType(module))
        fake = lambda *a: None
        fake.__module__, fake.__qualname__, fake.__name__ = module, name, name
        setattr(mod, name, fake)
        fakes[func] = fake

    class Respell(pickle.Pickler):
        def reducer_override(self, o):
            if type(o) is not np.ndarray:
                return NotImplemented
            if korder is not None and o is korder[0]:
                base, axes = korder[1], korder[2]
                return (fakes[np.core.numeric._frombuffer],
                        (pickle.PickleBuffer(base), base.dtype, base.shape, 'K', axes))
            r = o.__reduce_ex__(protocol)
            return (fakes[r[0]],) + tuple(r[1:])
    buf = io.BytesIO()
    Respell(buf, protocol=protocol).dump(obj)
    return buf.getvalue()


save('pickle', 'core_p2.p', respelled(arrays, 2))
save('pickle', 'core_p5.p', respelled(arrays, 5))
base = np.arange(24, dtype='<i4').reshape(2, 3, 4)
k = base.transpose(2, 0, 1)
save('pickle', 'korder_p5.p', respelled({'k': k}, 5, (k, base, (2, 0, 1))))


class Shell:
    def __reduce__(self):
        return (os.system, ('touch /tmp/iotx-fuzz-marker',))


save('pickle', 'hostile_p2.p', pickle.dumps({'x': small, 'evil': Shell()}, protocol=2))
save('pickle', 'hostile_p4.p', pickle.dumps({'evil': Shell()}, protocol=4))
save('pickle', 'hostile_p0.p', pickle.dumps(Shell(), protocol=0))
save('pickle', 'values_p4.p',
     pickle.dumps({'int': 3, 'list': [1, (2,)], 'f': 2.5, 'n': None, 'set': {1}}, protocol=4))
save('pickle', 'scalar_p4.p', pickle.dumps({'s': np.float32(1)}, protocol=4))

# --- safetensors (the reference writer's layout; see tests/io/safetensors_python_test.cc)
ORDER = ['BOOL', 'F4', 'F6_E2M3', 'F6_E3M2', 'U8', 'I8', 'F8_E5M2', 'F8_E4M3', 'F8_E8M0',
         'F8_E4M3FNUZ', 'F8_E5M2FNUZ', 'I16', 'U16', 'F16', 'BF16', 'I32', 'U32', 'F32', 'C64',
         'F64', 'I64', 'U64']


def safetensors(tensors, metadata=None, pad=True):
    items = sorted(tensors.items(), key=lambda kv: (-ORDER.index(kv[1][0]), kv[0].encode()))
    header, off, blobs = {}, 0, []
    if metadata is not None:
        header['__metadata__'] = metadata
    for name, (dtype, shape, data) in items:
        header[name] = {'dtype': dtype, 'shape': shape, 'data_offsets': [off, off + len(data)]}
        off += len(data)
        blobs.append(data)
    h = json.dumps(header, separators=(',', ':')).encode()
    if pad:
        h += b' ' * ((8 - len(h) % 8) % 8)
    return struct.pack('<Q', len(h)) + h + b''.join(blobs)


tensors = {
    'w': ('F32', [2, 3], small.tobytes()),
    'b': ('BF16', [3], b'\x00\x3f' * 3),
    'm': ('BOOL', [2], b'\x01\x00'),
    'q': ('F4', [2, 2], b'\x12\x34'),
    'e': ('F16', [0, 2], b''),
    's': ('I64', [], b'\x07' * 8),
}
save('safetensors', 'model.safetensors', safetensors(tensors, {'format': 'pt'}))
save('safetensors', 'unpadded.safetensors', safetensors(tensors, pad=False))
save('safetensors', 'empty.safetensors', safetensors({}))
save('safetensors', 'bad_overlap.safetensors',
     struct.pack('<Q', 95) + json.dumps({
         'a': {'dtype': 'U8', 'shape': [2], 'data_offsets': [0, 2]},
         'b': {'dtype': 'U8', 'shape': [2], 'data_offsets': [1, 3]}},
         separators=(',', ':')).encode().ljust(95) + b'xyz')
save('safetensors', 'bad_truncated.safetensors', safetensors(tensors)[:-5])
duplicate = b'{"a":{"dtype":"U8","shape":[],"data_offsets":[0,1]},"a":1}'
save('safetensors', 'bad_duplicate.safetensors',
     struct.pack('<Q', len(duplicate)) + duplicate + b'x')
