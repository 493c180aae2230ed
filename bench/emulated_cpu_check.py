"""Does numpy compute what it should on this CPU (or emulator)? Run it before trusting a run under emulation.

QEMU 7.2's AVX2 emulation (``qemu-x86_64``, Debian 12's qemu-user, any ``-cpu`` with AVX2, the default
``max`` included) reads an AVX2 gather whose index register is xmm4/ymm4 as if it had no index: every lane
loads the same element. numpy's AVX2 kernels use such gathers in argsort (x86-simd-sort), float32
minimum/maximum/fmin/fmax, float64 tanh and complex64 multiply/square (found by disassembling numpy 2.4.6's
``_multiarray_umath``; complex64 products were not caught wrong, so they are not checked here). Under that
emulator ``np.argsort`` returns unsorted orders for arrays of a few hundred elements or more, bm25s builds a
BM25 index that gives scores to the wrong texts, and a run picks other full-text passages
(phases/23_cpu_stable_embeddings.md, round 3). ONNX Runtime 1.32 has no gather instruction.

This script checks each of those functions against a plain Python computation and says what it found. Under
such an emulator, ``NPY_DISABLE_CPU_FEATURES=X86_V3`` makes numpy use its SSE4.2 kernels (ONNX Runtime still
runs its AVX2 ones: it chooses from cpuid on its own)::

    python bench/emulated_cpu_check.py                                          # natively: all exact
    qemu-x86_64 -cpu EPYC-Rome .venv/bin/python bench/emulated_cpu_check.py      # QEMU 7.2: argsort etc. wrong
    NPY_DISABLE_CPU_FEATURES=X86_V3 qemu-x86_64 -cpu EPYC-Rome .venv/bin/python bench/emulated_cpu_check.py
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable

import numpy as np
from numpy._core._multiarray_umath import __cpu_features__ as features  # what the CPU (or QEMU) reports

SIZES = (100, 300, 1000, 5000)


def argsort_sorts(dtype: type[np.generic]) -> bool:
    generator = np.random.default_rng(0)
    for size in SIZES:
        values = generator.integers(0, 2**31 - 1, size).astype(dtype)
        if not bool(np.all(np.diff(values[np.argsort(values)]) >= 0)):
            return False
    return True


def elementwise_exact(
    function: Callable[[np.ndarray, np.ndarray], np.ndarray], reference: Callable[[float, float], float]
) -> bool:
    generator = np.random.default_rng(1)
    left = generator.normal(size=4096).astype(np.float32)
    right = generator.normal(size=4096).astype(np.float32)
    got = function(left[::2], right[::2])  # strided: the kernels gather
    return all(float(g) == reference(float(a), float(b)) for g, a, b in zip(got, left[::2], right[::2], strict=True))


def tanh_close() -> bool:
    values = np.random.default_rng(2).normal(size=4096)[::2]
    return all(abs(float(t) - math.tanh(float(v))) <= 1e-15 for t, v in zip(np.tanh(values), values, strict=True))


def main() -> int:
    shown = ("AVX2", "X86_V3", "AVX512F", "X86_V4", "AVX512_ICL")
    print(
        f"numpy {np.__version__}; CPU as numpy sees it: "
        + ", ".join(f"{n} {'yes' if features.get(n) else 'no'}" for n in shown)
    )
    checks = {
        "argsort int64": argsort_sorts(np.int64),
        "argsort int32": argsort_sorts(np.int32),
        "argsort float64": argsort_sorts(np.float64),
        "argsort float32": argsort_sorts(np.float32),
        "minimum float32": elementwise_exact(np.minimum, min),
        "maximum float32": elementwise_exact(np.maximum, max),
        "tanh float64": tanh_close(),
    }
    for name, good in checks.items():
        print(f"{name:20} {'right' if good else 'WRONG'}")
    if all(checks.values()):
        print("numpy computes what it should on this CPU.")
        return 0
    print("numpy computes wrong results on this CPU: under QEMU 7.2, set NPY_DISABLE_CPU_FEATURES=X86_V3.")
    return 1


if __name__ == "__main__":
    sys.exit(main())
