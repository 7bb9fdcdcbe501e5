"""The report's SVG plots: small code, tested directly."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from vae.scorer_service.report.style import BAD, GOOD, WARN
from vae.scorer_service.report.svg import Bar, bar_chart, histogram, histogram_bins, text_width
from vae.scorer_service.report.timeline import session_timeline

NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def test_histogram_bins_count_every_value_once_and_include_the_maximum() -> None:
    counts, lo, hi = histogram_bins([0.1, 0.2, 0.2, 0.9, 1.0], bins=3)
    assert (lo, hi) == (0.1, 1.0)
    assert counts == [3, 0, 2]
    assert histogram_bins([0.5, 0.5], bins=2)[0] == [0, 2]
    assert histogram_bins([], bins=4)[0] == [0, 0, 0, 0]


def test_bars_are_coloured_by_value_and_text_is_escaped() -> None:
    bars = [Bar("<all>", 0.5, "(1/2)"), Bar("most", 0.75), Bar("best", 1.0), Bar("none", None)]
    root = parse(bar_chart(bars, title="A & B", plot_w=200))  # well-formed despite markup
    drawn = [r for r in root.iter(f"{NS}rect") if r.get("class") == "bar"]
    assert len(drawn) == 3, "an undecided rate draws no bar"
    assert [float(r.get("width", "0")) for r in drawn] == [100.0, 150.0, 200.0]
    assert [r.get("fill") for r in drawn] == [BAD, WARN, GOOD]
    texts = "".join(t.text or "" for t in root.iter(f"{NS}text"))
    assert "<all>" in texts and "A & B" in texts and "n/a" in texts and "50.0% (1/2)" in texts


def test_labels_never_clip_the_chart_grows_to_fit_them() -> None:
    note = "(10/10) 2 unscored +100.0 pp"
    long = "a very long domain name that goes on and on"
    root = parse(bar_chart([Bar(long, 1.0, note)], title="t", plot_w=200))
    width = float(root.get("width", "0"))
    # label right-aligned at label_w - 6 (its start stays >= 0), note after the bar
    assert width >= text_width(long) + 200 + text_width(f"100.0% {note}")


def test_histogram_draws_one_bar_per_bin_with_counts() -> None:
    root = parse(histogram([0.5, 0.6, 0.7, 2.0], title="latency", bins=4))
    bars = [r for r in root.iter(f"{NS}rect") if r.get("class") == "bar"]
    assert len(bars) == 4
    heights = [float(b.get("height", "0")) for b in bars]
    assert heights[0] == max(heights) and heights[1] == heights[2] == 0


def test_timeline_puts_waves_transcript_tools_and_markers_on_one_axis() -> None:
    session = {
        "end_s": 10.0,
        "spans": {"user": [[1.0, 2.0], [4.5, 5.5]], "agent": [[2.5, 6.0]]},
        "waveform": {"user": [0.0, 0.5, 0.2, 0.0], "agent": [0.0, 0.0, 0.9, 0.1]},
        "transcript": [{"t_s": 2.0, "side": "user", "text": "</script><b>x</b>"}],
        "tools": [{"t_s": 3.0, "side": "agent", "kind": "write", "name": "book <x>",
                   "error": ""}],
        "markers": [{"t_s": 4.5, "kind": "barge_in", "label": "user barge-in"}],
    }  # fmt: skip
    svg = session_timeline(session, width=1000)
    root = parse(svg)
    classes = [e.get("class") or "" for e in root.iter()]
    assert classes.count("speech user") == 2 and classes.count("speech agent") == 1
    assert "wave user" in classes and "wave agent" in classes
    assert classes.count("overlap") == 1
    assert "marker tool seek" in classes and "marker barge_in seek" in classes
    assert "line-mark seek" in classes and "playhead" in classes
    # marks sit where their time is: x = left + t / end * width
    left, width = float(root.get("data-left", "0")), float(root.get("data-width", "0"))
    mark = next(e for e in root.iter() if e.get("class") == "line-mark seek")
    assert float(mark.get("x", "0")) + 2 == round(left + 2.0 / 10.0 * width, 1)
    assert mark.get("data-t") == "2.000"
    assert "</script>" not in svg and "&lt;/script&gt;" in svg
