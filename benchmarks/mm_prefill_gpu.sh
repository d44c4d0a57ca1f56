#!/usr/bin/env bash
# mm-prefill on a GPU (about 4 minutes on one H100/H200): the compiled-kernel tests (autotuned bf16/fp16
# and fp32-IEEE kernels vs the torch reference), then Triton vs SDPA
# flash at N = 32k and 128k (bf16, H = 8, D = 128, density 5%), with the kernel's error vs the torch
# sparse reference and index building as a share of sparse time. Run from the repository root.
set -euo pipefail
export TRITON_INTERPRET=0  # compile the kernels (the test suite defaults to the CPU interpreter)
export PYTHONPATH="$PWD/lib:$PWD/cli${PYTHONPATH:+:$PYTHONPATH}"
PY=${PY:-python}
timeout 240 "$PY" -m pytest -q -m gpu tests/methods/mm_prefill
timeout 150 "$PY" benchmarks/mm_prefill.py --device cuda --n 32768,131072 --heads 8 --dim 128 --density 0.05 \
  --repeats 5
