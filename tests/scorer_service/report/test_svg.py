"""The report's SVG plots: small code, tested directly."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from scorer_service.report.svg import Bar, Marker, bar_chart, histogram, histogram_bins, timeline

NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def test_histogram_bins_count_every_value_once_and_include_the_maximum() -> None:
    counts, lo, hi = histogram_bins([0.1, 0.2, 0.2, 0.9, 1.0], bins=3)
    assert (lo, hi) == (0.1, 1.0)
    assert counts == [3, 0, 2]
    assert histogram_bins([0.5, 0.5], bins=2)[0] == [0, 2]
    assert histogram_bins([], bins=4)[0] == [0, 0, 0, 0]


def test_bar_chart_widths_follow_the_rates_and_text_is_escaped() -> None:
    svg = bar_chart([Bar("<all>", 0.5, "(1/2)"), Bar("none", None)], title="A & B", width=520)
    root = parse(svg)  # well-formed XML despite the markup characters
    bars = [r for r in root.iter(f"{NS}rect") if r.get("class") == "bar"]
    assert len(bars) == 1, "an undecided rate draws no bar"
    assert float(bars[0].get("width", "0")) == (520 - 190 - 70) * 0.5
    texts = "".join(t.text or "" for t in root.iter(f"{NS}text"))
    assert "<all>" in texts and "A & B" in texts and "n/a" in texts


def test_histogram_draws_one_bar_per_bin_with_counts() -> None:
    root = parse(histogram([0.5, 0.6, 0.7, 2.0], title="latency", bins=4))
    bars = [r for r in root.iter(f"{NS}rect") if r.get("class") == "bar"]
    assert len(bars) == 4
    heights = [float(b.get("height", "0")) for b in bars]
    assert heights[0] == max(heights) and heights[1] == heights[2] == 0


def test_timeline_has_both_lanes_overlap_and_markers() -> None:
    svg = timeline(
        10.0,
        user=[(1.0, 2.0), (4.5, 5.5)],
        agent=[(2.5, 6.0)],
        markers=[Marker(3.0, "tool", "book <x>"), Marker(4.5, "barge_in", "user barge-in")],
    )
    root = parse(svg)
    speech = [r.get("class") for r in root.iter(f"{NS}rect") if "speech" in (r.get("class") or "")]
    assert speech.count("speech user") == 2 and speech.count("speech agent") == 1
    overlaps = [r for r in root.iter(f"{NS}rect") if r.get("class") == "overlap"]
    assert len(overlaps) == 1
    kinds = [g.get("class") for g in root.iter(f"{NS}g")]
    assert kinds == ["marker tool", "marker barge_in"]
    assert "book <x>" in "".join(t.text or "" for t in root.iter(f"{NS}title"))
