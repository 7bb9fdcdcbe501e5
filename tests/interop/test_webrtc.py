"""The WebRTC tests, run inside a network namespace this test makes.

WebRTC's ICE never offers 127.0.0.1 as a candidate, and the tests must send
nothing to this machine's other addresses. So this test runs
``tests/interop/webrtc_netns.py`` with pytest inside ``unshare -n`` (as
root), where only lo exists, up, with 127.0.0.2 added: every candidate is a
loopback one. It skips, naming why, only where ``unshare`` is refused; it
fails if any test inside fails or skips.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.interop.conftest import ROOT, require_pipecat_venv

INNER = "tests/interop/webrtc_netns.py"


@pytest.mark.timeout(420)  # real-time sessions on a loaded CI machine
def test_webrtc_inside_a_network_namespace(tmp_path: Path) -> None:
    require_pipecat_venv()
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -n is refused here ({probe.stderr.strip()}): WebRTC tests need a "
                    "network namespace of their own")  # fmt: skip
    report = tmp_path / "junit.xml"
    script = (
        "ip link set lo up && ip addr add 127.0.0.2/8 dev lo && "
        f'exec "$0" -m pytest -q -p no:cacheprovider -o addopts="" --junitxml={report} {INNER}'
    )
    env = {**os.environ, "VAE_IN_NETNS": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        ["unshare", "-n", "sh", "-c", script, sys.executable],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=400,
    )  # fmt: skip
    output = (done.stdout + done.stderr)[-6000:]
    assert done.returncode == 0, output
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None, output
    counts = {k: int(suite.get(k, "0")) for k in ("tests", "failures", "errors", "skipped")}
    assert counts == {"tests": 6, "failures": 0, "errors": 0, "skipped": 0}, output
