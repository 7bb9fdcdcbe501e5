"""`pytest --vae-suite`: scenarios built to fail are strict xfail items, as the gate counts them.

A tiny suite of short scripted calls (seconds, not the example suite's
minutes), in a subprocess as a user runs pytest: one scenario passes, one
built to fail (the ``expect-fail`` tag) fails and is ``xfailed`` with its
reason, one built to fail (the ``expect_fail`` field) passes and is
``XPASS(strict)`` — a failure, exit 1. The terminal summary's gate agrees.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml, Skipped

from tests.cli.ci.test_pytest_plugin import pytest_run, sessions

TINY = """\
- name: hello_ok
  max_duration: 20
  success_signals: [CLEAN_EXIT]
  user: {script: [Hello.]}
  agent: {script: [Hi., {say: Bye., end: true}]}
- name: hang_up_known
  max_duration: 20
  success_signals: [CLEAN_EXIT]
  tags: [expect-fail]
  user: {script: [{say: Hello and bye., end: true}]}
  agent: {script: [Hi.]}
- name: hello_marked
  max_duration: 20
  success_signals: [CLEAN_EXIT]
  expect_fail: true
  user: {script: [Hello.]}
  agent: {script: [Hi., {say: Bye., end: true}]}
"""


@pytest.mark.timeout(300)
def test_expected_failures_are_xfailed_and_unexpected_passes_xpass_strict(tmp_path: Path) -> None:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "tiny.yaml").write_text(TINY)
    args = ["--vae-suite", "suite", "--vae-tts", "buzz", "-v", "-rxX"]
    done = pytest_run(tmp_path, *args, "--junitxml", "j.xml")
    assert done.returncode == 1, done.stdout[-4000:] + done.stderr[-2000:]
    out = done.stdout
    assert "suite/tiny.yaml::hello_ok PASSED" in out
    assert "suite/tiny.yaml::hang_up_known XFAIL (expected failure: CLEAN_EXIT: " in out
    assert "suite/tiny.yaml::hello_marked FAILED" in out
    assert "[XPASS(strict)] built to fail (expect-fail)" in out
    assert out.splitlines()[-1].startswith("=") and "1 failed, 1 passed, 1 xfailed" in out
    assert "XFAIL suite/tiny.yaml::hang_up_known - expected failure: CLEAN_EXIT: " in out
    # The gate on the same run (the terminal summary) fails for the same reason.
    assert "gate (no thresholds): failed: the agent missed the gate" in out
    assert "expect-fail: 1 scenario(s) built to fail unexpectedly passed: hello_marked" in out

    cases = {c.name: c for suite in JUnitXml.fromfile(str(tmp_path / "j.xml")) for c in suite}
    assert cases["hello_ok"].is_passed
    (xfail,) = cases["hang_up_known"].result  # pytest's own JUnit: an xfail is <skipped>
    assert isinstance(xfail, Skipped) and xfail.message.startswith("expected failure: ")
    (xpass,) = cases["hello_marked"].result
    assert isinstance(xpass, Failure) and xpass.message.startswith("[XPASS(strict)] ")

    # Without the scenario whose mark is wrong: exit 0, the expected failure stays xfailed.
    kept = pytest_run(tmp_path, *args, "-k", "not marked", "--vae-db", "k.db")
    assert kept.returncode == 0, kept.stdout[-3000:] + kept.stderr[-2000:]
    assert "1 passed, 1 deselected, 1 xfailed" in kept.stdout
    assert "gate (no thresholds): passed" in kept.stdout
    assert sessions(tmp_path / "k.db") == ["hang_up_known", "hello_ok"]
