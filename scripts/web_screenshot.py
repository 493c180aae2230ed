"""Regenerate the README's screenshot of the page (docs/web-demo-run.png) from a finished demo run.

    .venv/bin/python scripts/web_screenshot.py [--out docs/web-demo-run.png] [--figures /tmp/figures.png]

Starts `deepcritical serve --demo` on a free loopback port with a fresh DEEPCRITICAL_HOME, asks the example
question from the page (example button, then Research), waits for the finished report, and shoots the top of
the page at desktop width with Debian's Chromium (Playwright's own browser download is not needed). With
--figures it also shoots the PRISMA flow and the forest plot, stacked (the study-results table between them
is hidden in that shot only). The server is stopped by its pid at the end.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "Do SGLT2 inhibitors improve outcomes in heart failure?"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WIDTH, HEIGHT = 1280, 1600
RUN_MS = 240_000


def free_port() -> int:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return int(listener.getsockname()[1])


def start_server(home: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    serve = Path(sys.executable).parent / "deepcritical"
    env = {**os.environ, "DEEPCRITICAL_HOME": home}
    process = subprocess.Popen(
        [str(serve), "serve", "--demo", "--port", str(port)], env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"serve exited ({process.returncode}); see {log}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process
        except OSError:
            time.sleep(0.5)
    process.terminate()
    raise SystemExit(f"serve did not start in 120 s; see {log}")


def shoot(url: str, out: Path, figures: Path | None) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.goto(url)
            page.get_by_role("button", name=QUESTION).click()
            page.locator("#submit").click()
            expect(page.locator("#report h2", has_text="References")).to_be_visible(timeout=RUN_MS)
            expect(page.locator("#progress")).to_contain_text("run ended: finished")
            # The figures are fetched by the page and shown from blob: URLs: wait until each has loaded.
            page.wait_for_function(
                "Array.from(document.querySelectorAll('#report img')).every(i => i.complete && i.naturalWidth > 0)"
            )
            page.evaluate("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)")
            page.wait_for_timeout(500)
            out.parent.mkdir(parents=True, exist_ok=True)
            # End the shot above the first report block it would cut through (a heading, a list).
            height = page.evaluate(
                f"""() => {{
                  const cut = Array.from(document.getElementById('report').children)
                    .map(c => c.getBoundingClientRect()).find(r => r.bottom > {HEIGHT});
                  return cut && cut.top - 12 > {HEIGHT - 200} ? Math.floor(cut.top - 12) : {HEIGHT};
                }}"""
            )
            page.screenshot(path=str(out), clip={"x": 0, "y": 0, "width": WIDTH, "height": height})
            if figures is not None:
                shoot_figures(page, figures)
        finally:
            browser.close()


def shoot_figures(page: object, figures: Path) -> None:
    """The PRISMA flow and the forest plots, with what lies between them hidden (this shot only)."""
    box = page.evaluate(
        """() => {
          const heads = Array.from(document.querySelectorAll('#report h2'));
          const flow = heads.find(h => h.textContent.startsWith('Study flow'));
          const forest = heads.find(h => h.textContent.startsWith('Forest plots'));
          const after = heads[heads.indexOf(forest) + 1];
          for (let node = flow.nextElementSibling; node && node !== forest; node = node.nextElementSibling) {
            if (node.tagName === 'H2') {
              for (let n = node; n !== forest; n = n.nextElementSibling) n.style.display = 'none';
              break;
            }
          }
          const top = flow.getBoundingClientRect().top + scrollY - 16;
          const bottom = after.getBoundingClientRect().top + scrollY - 8;
          const report = document.getElementById('report').getBoundingClientRect();
          return {x: report.left - 16, y: top, width: report.width + 32, height: bottom - top};
        }"""
    )
    figures.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(figures), clip=box, full_page=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "web-demo-run.png")
    parser.add_argument("--figures", type=Path, default=None)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="deepcritical-shot-")
    port = free_port()
    log = Path(home) / "serve.log"
    server = start_server(home, port, log)
    try:
        shoot(f"http://127.0.0.1:{port}/", args.out, args.figures)
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"{args.out}: {args.out.stat().st_size} bytes")
    if args.figures is not None:
        print(f"{args.figures}: {args.figures.stat().st_size} bytes")


if __name__ == "__main__":
    main()
