"""The report's look: CSS and the colour scale, in one place.

Colours carry meaning and each one has a legend in the page: a rate bar is
green from 90 %, amber from 60 %, red below; a regression is red, a fix green;
the user is blue and the agent orange everywhere (waveforms, speech, transcript).
"""

from __future__ import annotations

GOOD = "#2e7d32"
WARN = "#e08a00"
BAD = "#c62828"
NEUTRAL = "#9e9e9e"
USER = "#1565c0"
AGENT = "#ef6c00"
TOOL = "#6a1b9a"
OVERLAP = "#d81b60"
REGRESSION = BAD
FIX = GOOD

#: (lower bound, colour, legend text) of the rate colour scale, best first.
RATE_BANDS = ((0.9, GOOD, "≥ 90%"), (0.6, WARN, "60–90%"), (0.0, BAD, "< 60%"))


def rate_colour(rate: float) -> str:
    for lower, colour, _ in RATE_BANDS:
        if rate >= lower:
            return colour
    return BAD


CSS = f"""
body{{font:14px/1.45 system-ui,sans-serif;margin:16px 24px;color:#222;max-width:1180px}}
h1{{font-size:20px;margin:0 0 2px}}h2{{font-size:17px;margin:22px 0 6px;
border-bottom:1px solid #ddd}}h3{{font-size:15px;margin:4px 0}}
table{{border-collapse:collapse;margin:6px 0}}td,th{{border:1px solid #ddd;padding:2px 7px;
text-align:left;vertical-align:top}}th{{background:#f5f5f5}}td.num,th.num{{text-align:right;
font-variant-numeric:tabular-nums;white-space:nowrap}}td.change{{white-space:nowrap}}
.sub{{color:#555;font-size:13px}}.small{{color:#666;font-size:12px}}
.scoring-status{{color:{BAD};font-weight:600}}
.badge{{display:inline-block;padding:0 8px;border-radius:9px;color:#fff;font-size:12px;
white-space:nowrap}}
.passed{{background:{GOOD}}}.failed{{background:{BAD}}}.unscored{{background:{WARN}}}
.xfailed{{background:#fff;color:{BAD};border:1px solid {BAD}}}
.xpassed{{background:#fff;color:{BAD};border:2px solid {BAD};font-weight:600}}
.not_applicable,.notscored,.absent{{background:{NEUTRAL}}}
.scorecard{{display:flex;flex-wrap:wrap;gap:10px 28px;align-items:flex-start}}
.headline{{font-size:34px;font-weight:700;line-height:1.1}}
.headline .of{{font-size:14px;font-weight:400;color:#555}}
.kpi{{min-width:150px}}.kpi b{{display:block;font-size:20px}}
.delta.better{{color:{GOOD}}}.delta.worse{{color:{BAD}}}.delta{{font-size:13px;color:#555}}
svg{{overflow:visible}}svg text{{font-size:11px;font-family:system-ui,sans-serif}}
svg .title{{font-weight:600;font-size:13px}}
.legend{{font-size:12px;color:#444;margin:2px 0 8px}}.legend span{{margin-right:12px;
white-space:nowrap}}.sw{{display:inline-block;width:12px;height:10px;margin-right:4px;
vertical-align:middle;border-radius:2px}}
ol.failing{{margin:4px 0;padding-left:22px}}ol.failing li{{margin:2px 0}}
.why{{color:#7a1010}}
.regression td.change{{color:{REGRESSION};font-weight:700}}
.fix td.change{{color:{FIX};font-weight:700}}
tr.regression{{background:#fdecea}}tr.fix{{background:#edf7ed}}
.controls{{position:sticky;top:0;background:#fff;padding:6px 0;border-bottom:1px solid #eee;
z-index:2;display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center}}
.controls[hidden]{{display:none}}
details.session{{border:1px solid #e0e0e0;border-radius:6px;margin:8px 0;padding:2px 12px}}
details.session>summary{{cursor:pointer;padding:4px 0}}
details.session[data-verdict=failed]{{border-left:5px solid {BAD}}}
details.session[data-verdict=unscored]{{border-left:5px solid {WARN}}}
details.session[data-verdict=passed]{{border-left:5px solid {GOOD}}}
.seek{{cursor:pointer}}tr.seek:hover{{background:#fff8e1}}
tr.line.user td.side{{color:{USER};font-weight:600}}tr.line.agent td.side{{color:{AGENT};
font-weight:600}}tr.line.playing{{background:#fff3c4}}
pre{{white-space:pre-wrap;word-break:break-word;background:#fafafa;padding:4px 6px;
border:1px solid #eee;margin:0;max-height:260px;overflow:auto;font-size:12px}}
.cols{{display:flex;flex-wrap:wrap;gap:0 18px}}.cols>div{{min-width:300px;flex:1}}
.hidden{{display:none}}
details.meta>summary{{cursor:pointer;font-weight:600}}
mark.hd-sub{{background:#fde68a}}mark.hd-del{{background:#fecaca;text-decoration:line-through}}
mark.hd-ins{{background:#bfdbfe}}table.heard td{{max-width:440px}}
"""
