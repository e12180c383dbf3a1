"""The HTML report in a real browser: Debian's `chromium`, headless, on the demo run.

`--dump-dom` gives the document after its script ran; `--screenshot` what a reader sees. Skips,
naming the package, where Chromium is not installed (`.ci/run` installs it).

`EXTENDER_UPDATE_SCREENSHOT=1 pytest tests/simulator/test_browser.py` also copies the
screenshot to docs/simulator-report.png (the README's picture).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from extender.cli import main
from extender.simulator.htmlreport import read_events

from .htmltree import parse

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "config" / "examples"
CHROMIUM = shutil.which("chromium")
WIDTH, HEIGHT = 1280, 1000
PLACEMENT_BLUE = (0x1F, 0x77, 0xB4)
PREEMPTION_RED = (0xD6, 0x27, 0x28)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="the browser test needs Chromium: install the Debian package "
                             "chromium (apt-get install -y chromium)")


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    assert CHROMIUM is not None
    result = subprocess.run(
        [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
         "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True, timeout=180)
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-2000:]
    return result


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, Path]:
    """The demo run, as a user makes it: `extender simulate ... --html`."""
    out = tmp_path_factory.mktemp("browser")
    html, events = out / "report.html", out / "events.jsonl"
    assert main(["simulate", "--cluster", str(EXAMPLES / "cluster.json"),
                 "--workload", str(EXAMPLES / "workload.yaml"),
                 "--policy", str(ROOT / "config" / "policy.yaml"), "--no-progress",
                 "--html", str(html), "--events", str(events)]) == 0
    return html, events


def test_the_browser_shows_the_timeline(demo, tmp_path):
    html, events = demo
    binds = [e for e in read_events(events) if e["action"] == "bind"]
    preempts = [e for e in read_events(events) if e["action"] == "preempt"]
    assert (len(binds), len(preempts)) == (5, 1)
    dom = parse(_chromium(tmp_path, "--dump-dom", html.as_uri()).stdout.decode())
    # The script ran (no error, not blocked by the page's Content-Security-Policy).
    assert dom.find("html").attrs.get("data-ready") == "1"
    svg = dom.find("svg", id="timeline")
    placements = [m for m in svg.find_all("circle", cls="mark") if "placement" in m.classes]
    assert sorted(m.attrs["data-pod"] for m in placements) == sorted(e["pod"] for e in binds)
    [preemption] = [m for m in svg.find_all("polygon", cls="mark") if "preemption" in m.classes]
    assert preemption.attrs["data-pod"] == preempts[0]["pod"] == "default/critical-job"
    assert len(svg.find_all("polyline", cls="series")) == 6  # 4 queue sizes, cpu, memory


@pytest.mark.slow
def test_a_mark_opens_its_pod(demo, tmp_path):
    html, _ = demo
    page = parse(html.read_text())
    [mark] = [m for m in page.find("svg", id="timeline").find_all(cls="mark")
              if "preemption" in m.classes]
    target = mark.parent.attrs["href"]
    dom = parse(_chromium(tmp_path, "--dump-dom", html.as_uri() + target).stdout.decode())
    opened = [d.attrs["data-pod"] for d in dom.find_all("details", cls="pod") if "open" in d.attrs]
    assert opened == ["default/critical-job"]


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.slow
def test_the_screenshot_is_the_report(demo, tmp_path):
    image_module = pytest.importorskip("PIL.Image", reason="Pillow (matplotlib's dependency, "
                                                           "in the test extra) reads the PNG")
    html, _ = demo
    shot = tmp_path / "report.png"
    _chromium(tmp_path, f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}", html.as_uri())
    data = shot.read_bytes()
    assert _png_size(data) == (WIDTH, HEIGHT)
    with image_module.open(shot) as img:
        counts = img.convert("RGB").getcolors(maxcolors=WIDTH * HEIGHT)  # [(n, (r, g, b))]
    total = WIDTH * HEIGHT
    white = sum(n for n, c in counts if c == (255, 255, 255))
    assert len(counts) > 100, "a blank or flat page"
    assert 0.05 < (total - white) / total < 0.6

    def near(colour: tuple[int, int, int]) -> int:
        return sum(n for n, c in counts
                   if sum(abs(a - b) for a, b in zip(c, colour, strict=True)) <= 12)

    # The timeline is on screen, in its colours: blue (placements, activeQ, cpu) and red
    # (the preemption, the eviction, the unschedulable pool).
    assert near(PLACEMENT_BLUE) > 200
    assert near(PREEMPTION_RED) > 30
    if os.environ.get("EXTENDER_UPDATE_SCREENSHOT"):
        shutil.copyfile(shot, ROOT / "docs" / "simulator-report.png")


def test_the_compare_page_fits_a_narrower_window(tmp_path):
    # Two runs side by side: at 1200 px the second one's reasons table was cut off and the page
    # scrolled sideways; the columns now stack where they do not fit side by side.
    html = tmp_path / "compare.html"
    assert main(["simulate", "--cluster", str(EXAMPLES / "cluster.json"),
                 "--workload", str(EXAMPLES / "workload.yaml"), "--no-progress",
                 "--compare", str(ROOT / "config" / "policy.yaml"),
                 str(EXAMPLES / "load-aware-policy.yaml"), "--html", str(html)]) == 0
    probe = tmp_path / "probe.html"
    probe.write_text(html.read_text().replace("</body>", (
        "<script>document.body.setAttribute('data-scroll-width', "
        "document.documentElement.scrollWidth)</script></body>")))
    for width in (1200, 900):
        dom = _chromium(tmp_path, f"--window-size={width},900", "--dump-dom",
                        probe.as_uri()).stdout.decode()
        scroll = int(dom.split('data-scroll-width="', 1)[1].split('"', 1)[0])
        assert scroll <= width, (width, scroll)
