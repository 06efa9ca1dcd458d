#!/usr/bin/env python3
"""Writes the input tensors of the example compiler work dir: DIR/inp-000.p.

The compiler's work dir holds its inputs as a pickle of {input_name: numpy array}; this
makes one for examples/workdir/io_transposes.json, deterministic (fixed seed), with the
default pickle protocol of the running Python:

  p0         [6144, 256] float16  the source document's example: reshape [3,16,128,2,2,64],
                                  transpose [0,4,5,3,1,2], which simplifies to
                                  [3,2048,2,128] / [0,3,2,1]
  weight_7   [768, 768]  float32  a 2-D weight, transposed [1,0]
  input_ids  [1, 128]    int32    no spec: copied unchanged

Usage: python3 examples/make_workdir.py DIR   (DIR must exist; a copy of examples/workdir)
"""
import os
import pickle
import sys

import numpy as np


def make_tensors():
    rng = np.random.default_rng(20240607)
    return {
        "p0": rng.standard_normal((6144, 256)).astype(np.float16),
        "weight_7": rng.standard_normal((768, 768)).astype(np.float32),
        "input_ids": rng.integers(0, 32000, size=(1, 128), dtype=np.int32),
    }


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        sys.exit(__doc__)
    path = os.path.join(argv[1], "inp-000.p")
    with open(path, "wb") as f:
        pickle.dump(make_tensors(), f)
    print("wrote", path)


if __name__ == "__main__":
    main(sys.argv)
