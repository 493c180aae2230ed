"""Run the command line on a machine made slow, and uneven, on purpose: does the evidence depend on speed?

Every stand-in HTTP answer waits a random 0-0.5 s (seeded by ``SLOW_SEED``), so concurrent searches finish
in another order; each full-text parse waits 1 s, each BM25 index 0.1 s and each embedding call 0.05 s.
Then compare with a run at full speed (ignoring run ids and times)::

    SLOW_SEED=1 DEEPCRITICAL_HOME=/tmp/slow/home PYTHONPATH=src python bench/slowed_demo_run.py research \\
        "Do SGLT2 inhibitors improve outcomes in heart failure?" --demo --out /tmp/slow/q2 --quiet

Round 3 of phases/23_cpu_stable_embeddings.md: two seeds, 18 s instead of 5 s, the baseline's report.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from typing import Any

import httpx2

import deepcritical.documents.reader as reader
import deepcritical.sources.fulltext as fulltext
from deepcritical.cli.app import main
from deepcritical.evidence.onnx_encoder import OnnxEncoder
from deepcritical.evidence.retrieval import BM25Index

delays = random.Random(int(os.environ.get("SLOW_SEED", "1")))
answer, read_bytes, index, encode = (
    httpx2.MockTransport.handle_async_request,
    reader.read_bytes,
    BM25Index.__init__,
    OnnxEncoder.encode,
)


async def slow_answer(self: httpx2.MockTransport, request: httpx2.Request) -> httpx2.Response:
    await asyncio.sleep(delays.uniform(0, 0.5))
    return await answer(self, request)


def slow_read_bytes(*args: Any, **kwargs: Any) -> Any:
    time.sleep(1.0)
    return read_bytes(*args, **kwargs)


def slow_index(self: BM25Index, *args: Any, **kwargs: Any) -> None:
    time.sleep(0.1)
    index(self, *args, **kwargs)


def slow_encode(self: OnnxEncoder, *args: Any, **kwargs: Any) -> Any:
    time.sleep(0.05)
    return encode(self, *args, **kwargs)


httpx2.MockTransport.handle_async_request = slow_answer  # type: ignore[method-assign]
reader.read_bytes = fulltext.read_bytes = slow_read_bytes
BM25Index.__init__ = slow_index  # type: ignore[method-assign]
OnnxEncoder.encode = slow_encode  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.argv[0] = "deepcritical"
    main()
