"""A gate's result as JUnit XML, the file Jenkins, GitLab and GitHub test reporters read.

Layout (the common JUnit dialect, as ``junitparser`` reads it):

- ``<testsuites>`` holds one ``<testsuite>`` per domain (name = domain) and
  one ``<testsuite name="vae gate">`` with a test case per gate check;
- each scenario is a ``<testcase name="SCENARIO" classname="DOMAIN">`` (one
  per trial, ``name#k``, for repeats), its ``time`` the call's length;
- a failed scenario holds ``<failure message="SIGNAL: one-line reason">``
  with every failing signal and its reasons in the body; an unscored one an
  ``<error>`` with the cause — never ``<skipped>``, which most CI views show
  green; only a scenario no success signal applies to is ``<skipped>``;
- a scenario built to fail (``expect_fail``) that failed is a *passing* test
  case whose ``<system-out>`` opens with "expected failure (expect-fail): …"
  and its failing signals — never ``<skipped>`` (it ran and was judged); one
  that passed is a ``<failure type="unexpected-pass">``;
- what each side said goes in ``<system-out>`` of failing and unscored cases;
- every suite carries the run id, scoring id, latency p50, the gate's verdict
  and the report's links as ``<property>`` elements;
- a failed check is a ``<failure>`` of its own test case saying which
  threshold and by how much; a check that could not be decided an ``<error>``.

All text is bot text as far as XML is concerned: :func:`xml_text` replaces
every character XML 1.0 forbids (control characters, lone surrogates,
U+FFFE/U+FFFF) with a visible ``\\uXXXX`` escape, and ElementTree escapes
``<``, ``&``, ``>`` and quotes (no CDATA is written, so ``]]>`` is plain text).
The file is well formed whatever a transcript contains.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from vae.recordings.scenarios.expect import EXPECT_FAIL_TAG
from vae.scorer_service.gate.cases import Case
from vae.scorer_service.gate.checks import FAILED, UNDECIDED, Check
from vae.scorer_service.gate.decide import GateResult

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
#: Longest message attribute: CI views show it on one line.
MESSAGE_LIMIT = 500
GATE_SUITE = "vae gate"


def xml_text(value: object) -> str:
    """``value`` as text every XML 1.0 parser accepts (forbidden characters escaped)."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", str(value))


def _one_line(text: str) -> str:
    flat = " ".join(xml_text(text).split())
    return flat if len(flat) <= MESSAGE_LIMIT else flat[: MESSAGE_LIMIT - 1] + "…"


def _el(parent: ET.Element, tag: str, text: str = "", **attrs: str) -> ET.Element:
    el = ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attrs.items()})
    if text:
        el.text = xml_text(text)
    return el


def properties(result: GateResult) -> dict[str, str]:
    """``vae.*`` properties every suite carries (empty values left out)."""
    p50 = result.latency_p50_s
    rate = result.success_rate
    values = {
        "vae.run_id": result.run_id,
        "vae.run_status": result.run_status,
        "vae.scoring_id": result.scoring_id or "",
        "vae.gate": result.status,
        "vae.exit_code": str(result.exit_code),
        "vae.success_rate": "" if rate is None else f"{rate:.4f}",
        "vae.latency_p50_s": "" if p50 is None else f"{p50:.3f}",
        "vae.baseline_run": result.comparison.run_a if result.comparison else "",
        "vae.report": result.links.get("report", ""),
        "vae.report_url": result.links.get("report_url", ""),
        "vae.report_command": result.links.get("report_command", ""),
        "vae.database": result.links.get("database", ""),
    }
    return {k: v for k, v in values.items() if v}


def _body(case: Case) -> str:
    where = f"session {case.session_id}" if case.session_id else "no session"
    stop = f", stop reason {case.stop_reason}" if case.stop_reason else ""
    lines = [f"{case.name} {case.verdict} ({where}{stop})"]
    lines += [s.line() for s in case.signals]
    if case.causes and case.verdict == "unscored":
        lines.append("causes: " + ", ".join(case.causes))
    return "\n".join(lines)


def _said(case: Case) -> str:
    return "\n".join(
        f"[{float(t.get('t_s', 0.0)):7.2f} s] {t.get('side', '?')}: {t.get('text', '')}"
        for t in case.transcript
    )


def _testcase(suite: ET.Element, case: Case) -> None:
    el = _el(suite, "testcase", name=case.name, classname=case.domain or "vae",
             time=f"{case.duration_s:.3f}")  # fmt: skip
    said = _said(case)
    if case.outcome == "xfailed":  # passes, and says so first
        head = f"expected failure ({EXPECT_FAIL_TAG}): {case.reason or 'failed'}"
        _el(el, "system-out", "\n\n".join(x for x in (head, _body(case), said) if x))
        return
    if case.outcome == "xpassed":
        _el(el, "failure", _body(case), message=_one_line(case.reason), type="unexpected-pass")
    elif case.verdict == "failed":
        kind = next((s.signal for s in case.signals if s.gating), "failed")
        _el(el, "failure", _body(case), message=_one_line(case.reason or "failed"), type=kind)
    elif case.verdict == "not_applicable":
        _el(el, "skipped", message="not applicable: no success signal of this scenario applies")
    elif case.verdict != "passed":  # unscored (or any verdict that is not a pass): an error
        why = _one_line(f"{case.verdict}: {case.reason or ', '.join(case.causes)}")
        _el(el, "error", _body(case), message=why, type=case.verdict)
    if said:
        _el(el, "system-out", said)


def _gate_case(suite: ET.Element, check: Check) -> None:
    el = _el(suite, "testcase", name=check.name, classname="vae.gate", time="0")
    if check.status == FAILED:
        _el(el, "failure", check.message, message=_one_line(check.message), type="threshold")
    elif check.status == UNDECIDED:
        text = f"could not decide: {check.message}"
        _el(el, "error", text, message=_one_line(text), type="undecided")


def _suite(root: ET.Element, name: str, props: dict[str, str]) -> ET.Element:
    suite = _el(root, "testsuite", name=name)
    holder = _el(suite, "properties")
    for key, value in props.items():
        _el(holder, "property", name=key, value=value)
    return suite


def _count(suite: ET.Element) -> dict[str, int]:
    cases = suite.findall("testcase")
    return {
        "tests": len(cases),
        "failures": sum(1 for c in cases if c.find("failure") is not None),
        "errors": sum(1 for c in cases if c.find("error") is not None),
        "skipped": sum(1 for c in cases if c.find("skipped") is not None),
    }


def junit_xml(result: GateResult) -> str:
    """The whole document, with its XML declaration."""
    root = ET.Element("testsuites", {"name": xml_text(f"vae {result.run_id}")})
    props = properties(result)
    for domain in sorted({c.domain for c in result.cases}):
        suite = _suite(root, domain or "vae", props)
        for case in (c for c in result.cases if c.domain == domain):
            _testcase(suite, case)
    gate_suite = _suite(root, GATE_SUITE, props)
    for check in result.checks:
        _gate_case(gate_suite, check)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in root.findall("testsuite"):
        numbers = _count(suite)
        time = sum(float(c.get("time", "0")) for c in suite.findall("testcase"))
        suite.attrib.update({k: str(v) for k, v in numbers.items()}, time=f"{time:.3f}")
        totals = {k: totals[k] + numbers[k] for k in totals}
    root.attrib.update({k: str(v) for k, v in totals.items()})
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(result: GateResult, path: str | Path) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(junit_xml(result), encoding="utf-8")
    return out
