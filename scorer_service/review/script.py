"""The review page's own script and style, beside the report's (which it also runs).

The script posts each label to ``labels`` on the page's own server with the
page's token in a header (``X-Vae-Token``: a request from another origin
cannot send it without a preflight this server never answers), marks what
was saved or why not, and steps through sessions by keyboard: ``p``/``f``/
``u`` label the current session (with its note) and go to the next
unlabelled one, ``n`` goes there without labelling, ``k`` goes back,
``space`` plays or pauses. Keys typed into a note are the note's. Sessions
hidden by the report's filters are skipped. A session's details (timeline,
audio, transcript, evidence) are fetched from the server the first time it
is opened; until then it shows its summary and labelling panel. Bot text never reaches this
script except as escaped JSON or element text (``textContent``).
"""

from __future__ import annotations

from vae.scorer_service.report.style import BAD, GOOD, NEUTRAL, WARN

REVIEW_CSS = f"""
.keys{{margin:4px 0 8px}}kbd{{border:1px solid #bbb;border-radius:3px;padding:0 4px;
background:#f7f7f7;font-size:11px}}
details.session.current{{outline:3px solid #1565c0;outline-offset:2px}}
details.session{{scroll-margin-top:96px}}.lwhat .reason{{color:#444}}
.lpanel{{background:#f8fafc;border:1px solid #dde3ea;border-radius:6px;padding:4px 10px;
margin:6px 0}}
.lrow{{padding:4px 0;border-bottom:1px solid #eceff3}}.lrow:last-child{{border-bottom:0}}
.lact{{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin-top:3px}}
button.lb{{border:1px solid #999;background:#fff;border-radius:4px;padding:1px 10px;
cursor:pointer}}
button.lb.pass[aria-pressed=true]{{background:{GOOD};color:#fff;border-color:{GOOD}}}
button.lb.fail[aria-pressed=true]{{background:{BAD};color:#fff;border-color:{BAD}}}
button.lb.unsure[aria-pressed=true]{{background:{WARN};color:#fff;border-color:{WARN}}}
input.lnote{{flex:1;min-width:220px;padding:1px 4px}}
.lstate{{color:#555;font-size:12px}}.lstate.error{{color:{BAD};font-weight:600}}
ul.lothers{{margin:2px 0 0 18px;padding:0}}
.mine-chip{{font-size:12px;border-radius:9px;padding:0 7px;background:#eee;color:#444}}
.mine-chip.pass{{background:{GOOD};color:#fff}}.mine-chip.fail{{background:{BAD};color:#fff}}
.mine-chip.unsure{{background:{WARN};color:#fff}}#status{{color:{NEUTRAL}}}
"""

REVIEW_SCRIPT = r"""
(function () {
  "use strict";
  var node = document.getElementById("review-data");
  var list = document.getElementById("sessions");
  if (!node || !list) return;
  var data = JSON.parse(node.textContent);
  var sessions = Array.prototype.slice.call(list.querySelectorAll("details.session"));
  var current = null;
  function say(text) { document.getElementById("status").textContent = text; }
  function labelled(el) { return el.dataset.labelled === "1"; }
  function shown() {
    return Array.prototype.slice.call(list.querySelectorAll("details.session"))
      .filter(function (el) { return !el.classList.contains("hidden"); });
  }
  function setCurrent(el, scroll, leaveOpenState) {
    if (current && current !== el) current.classList.remove("current");
    current = el;
    if (!el) return;
    el.classList.add("current");
    if (!leaveOpenState) el.open = true;
    if (scroll) el.scrollIntoView({block: "start"});
  }
  function step(dir, unlabelledOnly) {
    var all = shown();
    if (!all.length) return false;
    var i = current ? all.indexOf(current) : -1;
    for (var n = 1; n <= all.length; n++) {
      var el = all[((i + dir * n) % all.length + all.length) % all.length];
      if (!unlabelledOnly || !labelled(el)) {
        if (current && current !== el) current.open = false;
        setCurrent(el, true);
        say("");
        return true;
      }
    }
    say("every session shown is labelled");
    return false;
  }
  function progress() {
    var done = sessions.filter(labelled).length;
    document.getElementById("progress").textContent =
      done + " of " + sessions.length + " sessions labelled";
  }
  function mark(row, label) {
    row.dataset.verdict = label.verdict;
    row.querySelectorAll("button.lb").forEach(function (b) {
      b.setAttribute("aria-pressed", b.dataset.v === label.verdict ? "true" : "false");
    });
    var state = row.querySelector(".lstate");
    state.classList.remove("error");
    state.textContent = "saved: " + label.verdict + (label.note ? " (with note)" : "");
    if (row.dataset.kind === "session") {
      var session = row.closest("details.session");
      session.dataset.labelled = "1";
      var chip = session.querySelector(".mine-chip");
      chip.textContent = "you: " + label.verdict;
      chip.className = "mine-chip " + label.verdict;
      progress();
    }
  }
  function send(row, verdict) {
    var state = row.querySelector(".lstate");
    state.textContent = "saving…";
    var body = {
      session_id: row.dataset.sid, kind: row.dataset.kind, signal: row.dataset.signal,
      assertion: +row.dataset.assertion, verdict: verdict,
      note: row.querySelector(".lnote").value
    };
    return fetch("labels", {
      method: "POST",
      headers: {"Content-Type": "application/json", "X-Vae-Token": data.token},
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) throw new Error(j.error || ("HTTP " + r.status));
        return j;
      });
    }).then(function (label) { mark(row, label); return label; }, function (e) {
      state.textContent = "not saved: " + e.message;
      state.classList.add("error");
      throw e;
    });
  }
  list.addEventListener("click", function (ev) {
    var button = ev.target.closest("button.lb");
    var session = ev.target.closest("details.session");
    if (session && session !== current && ev.target.closest("summary, .lpanel")) {
      // A click on the summary opens or closes it natively: leave that to the browser.
      setCurrent(session, false, !!ev.target.closest("summary"));
    }
    if (!button) return;
    ev.preventDefault();
    send(button.closest(".lrow"), button.dataset.v).catch(function () {});
  });
  list.addEventListener("keydown", function (ev) {
    if (ev.key !== "Enter" || !ev.target.classList.contains("lnote")) return;
    ev.preventDefault();
    var row = ev.target.closest(".lrow");
    if (row.dataset.verdict) send(row, row.dataset.verdict).catch(function () {});
    else row.querySelector(".lstate").textContent = "choose pass, fail or can't tell first";
  });
  var KEYS = {p: "pass", f: "fail", u: "unsure"};
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var tag = ev.target && ev.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || tag === "BUTTON") return;
    if (KEYS[ev.key]) {
      ev.preventDefault();
      if (!current && !step(1, true)) return;
      var row = current.querySelector('.lrow[data-kind="session"]');
      send(row, KEYS[ev.key]).then(function () { step(1, true); }, function () {});
    } else if (ev.key === "n" || ev.key === "j") {
      ev.preventDefault();
      step(1, true);
    } else if (ev.key === "k") {
      ev.preventDefault();
      step(-1, false);
    } else if (ev.key === " " && current) {
      var audio = current.querySelector("audio");
      if (!audio) return;
      ev.preventDefault();
      if (audio.paused) { var p = audio.play(); if (p && p.catch) p.catch(function () {}); }
      else audio.pause();
    }
  });
  // A session's details come from the server the first time it is opened (the page holds
  // only summaries and panels, so a large run opens at once). The HTML is the server's own
  // rendering, every bot text in it escaped there.
  function load(el) {
    var slot = el.querySelector(":scope > .details-later");
    if (!slot || slot.dataset.state) return;
    slot.dataset.state = "loading";
    fetch(slot.dataset.src, {headers: {"X-Vae-Token": data.token}}).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.text();
    }).then(function (html) {
      var body = document.createElement("div");
      body.className = "details";
      body.innerHTML = html;
      slot.replaceWith(body);
    }, function (e) {
      slot.dataset.state = "";
      slot.textContent = "could not load this session's details (" + e.message +
        "): close and open it again";
    });
  }
  list.addEventListener("toggle", function (ev) {
    var el = ev.target;
    if (el.matches && el.matches("details.session") && el.open) load(el);
  }, true);
  sessions.forEach(function (el) { el.open = false; });
  var first = shown().filter(function (el) { return !labelled(el); })[0] || shown()[0];
  setCurrent(first || null, false);
  progress();
})();
"""
