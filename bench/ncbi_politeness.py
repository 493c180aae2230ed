"""NCBI politeness across processes: is the rate limit kept at the server's end, and how much of it is used?

    python bench/ncbi_politeness.py [--rounds 3] [--processes 2] [--searches 20] [--separate-homes]

Starts a local E-utilities stand-in (HTTP on 127.0.0.1, a free port) that timestamps every request as
it arrives, then ``--processes`` search processes at once on one DEEPCRITICAL_HOME, each running
``--searches`` concurrent PubMed searches (esearch + efetch each) through the run's own wiring
(``run.setup.sources``: the machine-wide limiter under the home, NCBI_EUTILS_URL pointing at the
stand-in). Once without an API key (NCBI allows 3 requests/s) and once with one (10 requests/s).

Prints, per key situation and round: requests seen, the busiest one-second window at the server
(goal: never above the limit), and the share of the allowed rate used between the first and the last
request (goal: at least 90 %).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from bisect import bisect_left
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar
from urllib.parse import parse_qs, urlsplit

LIMITS = {"without a key": (None, 3), "with a key": ("bench-key-0123456789abcdef0123456789ab", 10)}


class EutilsStandIn(BaseHTTPRequestHandler):
    """esearch answers two PMIDs derived from the term; efetch an article per PMID. Arrival times are
    taken first thing, before the answer is built."""

    protocol_version = "HTTP/1.1"  # keep-alive, as NCBI serves it
    disable_nagle_algorithm = True  # answers go out at once, not after a delayed ACK
    arrivals: ClassVar[list[float]] = []
    lock = threading.Lock()

    def do_GET(self) -> None:
        arrived = time.time()
        with self.lock:
            self.arrivals.append(arrived)
        url = urlsplit(self.path)
        params = {key: values[0] for key, values in parse_qs(url.query).items()}
        if url.path.endswith("esearch.fcgi"):
            seed = abs(hash(params.get("term", ""))) % 10_000_000
            ids = [str(10_000_000 + 2 * seed), str(10_000_001 + 2 * seed)]
            body = json.dumps({"esearchresult": {"count": "2", "idlist": ids}})
            kind = "application/json"
        else:
            body = "<PubmedArticleSet>" + "".join(
                f"<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article><ArticleTitle>Title {pmid}"
                f"</ArticleTitle><Abstract><AbstractText>Abstract {pmid}.</AbstractText></Abstract></Article>"
                "</MedlineCitation></PubmedArticle>"
                for pmid in params.get("id", "").split(",")
                if pmid
            )
            body += "</PubmedArticleSet>"
            kind = "text/xml"
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the figures are the output."""


class StandInServer(ThreadingHTTPServer):
    daemon_threads = True
    # The default backlog of 5 drops connection attempts when 40 searches connect at once, and each
    # dropped SYN costs the client a one-second retransmission: a stall of the stand-in, not the client.
    request_queue_size = 128


def busiest_window(stamps: list[float], window: float = 1.0) -> int:
    """The most arrivals inside any half-open window [t, t + window); the window starting at an arrival
    is the busiest one through that arrival."""
    ordered = sorted(stamps)
    return max((bisect_left(ordered, start + window) - i for i, start in enumerate(ordered)), default=0)


def share_of_rate(stamps: list[float], limit: int) -> float:
    """Requests per second between the first and the last arrival, over the allowed rate."""
    ordered = sorted(stamps)
    span = ordered[-1] - ordered[0]
    return (len(ordered) - 1) / span / limit if span > 0 else 0.0


def worker(searches: int, first: int) -> None:
    """One search process: ``searches`` concurrent PubMed searches, built as a run builds them."""
    from deepcritical.config import load_settings
    from deepcritical.logs import configure_logging
    from deepcritical.run import setup
    from deepcritical.sources.factory import make_http_client

    configure_logging()

    async def main() -> None:
        settings = load_settings()
        async with make_http_client() as client:
            handler = setup.sources(settings, client).handler
            results = await asyncio.gather(
                *(handler.execute(f"statins sepsis trial {n}", 5) for n in range(first, first + searches))
            )
        failed = [error for result in results for error in result.errors]
        if failed:
            raise SystemExit(f"searches failed: {failed[:3]}")

    asyncio.run(main())


def one_round(url: str, key: str | None, processes: int, searches: int, *, separate_homes: bool) -> list[float]:
    EutilsStandIn.arrivals.clear()
    with tempfile.TemporaryDirectory() as home:
        env = {name: value for name, value in os.environ.items() if name not in {"REDIS_URL", "DEMO_MODE"}}
        env |= {"DEEPCRITICAL_SOURCES": "pubmed", "NCBI_EUTILS_URL": url}
        if key is not None:
            env["NCBI_API_KEY"] = key
        else:
            env.pop("NCBI_API_KEY", None)
        started = [
            subprocess.Popen(
                [sys.executable, __file__, "--worker", str(searches), str(n * searches)],
                # Separate homes give each process a limit of its own: what a per-process limiter does.
                env=env | {"DEEPCRITICAL_HOME": str(Path(home) / str(n)) if separate_homes else home},
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(processes)
        ]
        for process in started:
            _, stderr = process.communicate(timeout=600)
            if process.returncode != 0:
                raise SystemExit(f"a search process failed:\n{stderr}")
    return list(EutilsStandIn.arrivals)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--searches", type=int, default=20, help="concurrent searches per process")
    parser.add_argument(
        "--separate-homes", action="store_true", help="one home per process: a per-process limit, for comparison"
    )
    parser.add_argument("--worker", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return 0

    server = StandInServer(("127.0.0.1", 0), EutilsStandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/entrez/eutils"
    homes = "a home each" if args.separate_homes else "one home"
    print(f"E-utilities stand-in at {url}; {args.processes} processes ({homes}) x {args.searches} concurrent searches")
    worst: dict[str, tuple[int, float]] = {}
    try:
        for label, (key, limit) in LIMITS.items():
            for round_number in range(1, args.rounds + 1):
                stamps = one_round(url, key, args.processes, args.searches, separate_homes=args.separate_homes)
                busiest, share = busiest_window(stamps), share_of_rate(stamps, limit)
                verdict = "ok" if busiest <= limit else "OVER THE LIMIT"
                print(
                    f"{label} (limit {limit}/s), round {round_number}: {len(stamps)} requests; "
                    f"busiest 1-s window {busiest} ({verdict}); {share:.1%} of the allowed rate used"
                )
                seen = worst.get(label, (busiest, share))
                worst[label] = (max(seen[0], busiest), min(seen[1], share))
    finally:
        server.shutdown()
    for label, (busiest, share) in worst.items():
        print(f"{label}: busiest 1-s window over all rounds {busiest}; lowest share of the allowed rate {share:.1%}")
    return 0 if all(busiest <= LIMITS[label][1] for label, (busiest, _) in worst.items()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
