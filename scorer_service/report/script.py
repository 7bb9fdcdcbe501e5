"""The report's small inline script, and data embedded for it, safely.

Offline by construction: no network, no external file. The page is complete
without it (sessions are ``<details>`` that open natively, failing ones open
from the start); the script adds filters (verdict, domain, failing signal,
tag, failing only), sorting (latency, duration, name), expand/collapse all,
click-to-seek (transcript lines, timeline marks, anywhere on a timeline) and a
playhead that follows playback.

Bot text reaches the script only as JSON in a ``<script type=
"application/json">`` block, with ``<``, ``>`` and ``&`` written as ``\\u003c``
escapes, so a transcript holding ``</script>`` cannot end the block.
"""

from __future__ import annotations

import json
from typing import Any


def script_json(value: Any) -> str:
    """JSON that is safe inside a ``<script>`` element (no ``</script>``, no ``<!--``)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


SCRIPT = r"""
(function () {
  "use strict";
  var node = document.getElementById("vae-data");
  if (!node) return;
  var data = JSON.parse(node.textContent);
  var list = document.getElementById("sessions");
  var controls = document.getElementById("controls");
  if (!list || !controls) return;
  controls.hidden = false;
  var els = Array.prototype.slice.call(list.querySelectorAll("details.session"));
  var byIdx = {};
  els.forEach(function (el) { byIdx[el.dataset.idx] = el; });
  function val(id) { var e = document.getElementById(id); return e ? e.value : ""; }
  function apply() {
    var verdict = val("f-verdict"), domain = val("f-domain"), signal = val("f-signal"),
        tag = val("f-tag"), failing = document.getElementById("f-failing").checked, shown = 0;
    data.sessions.forEach(function (s) {
      var ok = (!verdict || s.verdict === verdict) && (!domain || s.domain === domain) &&
        (!signal || s.failing_signals.indexOf(signal) >= 0) &&
        (!tag || s.tags.indexOf(tag) >= 0) &&
        (!failing || s.verdict === "failed" || s.verdict === "unscored");
      byIdx[s.idx].classList.toggle("hidden", !ok);
      if (ok) shown += 1;
    });
    document.getElementById("f-count").textContent =
      shown + " of " + data.sessions.length + " sessions shown";
  }
  function sort() {
    var key = val("f-sort");
    var rows = data.sessions.slice();
    var num = function (v) { return v === null || v === undefined ? -1 : v; };
    if (key === "latency") rows.sort(function (a, b) { return num(b.latency) - num(a.latency); });
    else if (key === "duration") rows.sort(function (a, b) { return b.duration - a.duration; });
    else if (key === "name") rows.sort(function (a, b) { return a.name.localeCompare(b.name); });
    else rows.sort(function (a, b) { return a.idx - b.idx; });
    rows.forEach(function (s) { list.appendChild(byIdx[s.idx]); });
  }
  ["f-verdict", "f-domain", "f-signal", "f-tag", "f-failing"].forEach(function (id) {
    document.getElementById(id).addEventListener("change", apply);
  });
  document.getElementById("f-sort").addEventListener("change", sort);
  document.getElementById("expand-all").addEventListener("click", function () {
    els.forEach(function (el) { el.open = true; });
  });
  document.getElementById("collapse-all").addEventListener("click", function () {
    els.forEach(function (el) { el.open = false; });
  });
  function openTarget() {
    var id = location.hash.slice(1), el = id && document.getElementById(id);
    if (el && el.tagName === "DETAILS") el.open = true;
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  function seek(session, t) {
    var audio = session.querySelector("audio");
    if (!audio) return;
    audio.currentTime = Math.max(0, t);
    var p = audio.play();
    if (p && p.catch) p.catch(function () {});
    move(session, audio);
  }
  function move(session, audio) {
    var svg = session.querySelector("svg.timeline"), line = svg && svg.querySelector(".playhead");
    if (!line) return;
    var left = +svg.dataset.left, width = +svg.dataset.width, end = +svg.dataset.end;
    var x = left + Math.min(audio.currentTime / end, 1) * width;
    line.setAttribute("x1", x); line.setAttribute("x2", x);
    line.setAttribute("visibility", "visible");
    var rows = session.querySelectorAll("tr.line"), current = null;
    rows.forEach(function (r) { if (+r.dataset.t <= audio.currentTime + 0.05) current = r; });
    rows.forEach(function (r) { r.classList.toggle("playing", r === current); });
  }
  list.addEventListener("click", function (ev) {
    var session = ev.target.closest("details.session");
    if (!session) return;
    var mark = ev.target.closest("[data-t]");
    if (mark) { seek(session, +mark.dataset.t); return; }
    var svg = ev.target.closest("svg.timeline");
    if (svg) {
      var box = svg.getBoundingClientRect(), scale = box.width / svg.viewBox.baseVal.width;
      var x = (ev.clientX - box.left) / scale - +svg.dataset.left;
      seek(session, Math.max(0, x / +svg.dataset.width) * +svg.dataset.end);
    }
  });
  // Media events do not bubble: caught on the way down instead, so a session's audio
  // added later (the review page loads a session's details when it is opened) is followed too.
  ["play", "seeked", "timeupdate"].forEach(function (type) {
    list.addEventListener(type, function (ev) {
      var audio = ev.target, session = audio.closest && audio.closest("details.session");
      if (!session || audio.tagName !== "AUDIO") return;
      if (type !== "play") { move(session, audio); return; }
      var tick = function () {
        move(session, audio);
        if (!audio.paused) requestAnimationFrame(tick);
      };
      tick();
    }, true);
  });
  apply();
})();
"""
