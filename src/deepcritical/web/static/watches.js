// The page's "Watched questions": add, list and remove watches, each with its history and, over time, the
// favourable share of the studies its verdict weighs (where the verdict is read from them; else its confidence)
// as a small SVG chart. Everything from a watch is set as text, never as HTML.
"use strict";

(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const CHART_WIDTH = 360;
  const CHART_HEIGHT = 150;
  // Room for the value axis's labels on the left and the dates under the time axis.
  const LEFT = 44, RIGHT = 12, TOP = 22, BOTTOM = 34;
  const $ = (id) => document.getElementById(id);

  // Dates as ISO 8601 (2024-03-01), whatever the browser's locale: a watch's history is read across countries.
  const isoDate = (iso) => new Date(iso).toISOString().slice(0, 10);
  const isoTime = (iso) => new Date(iso).toISOString().slice(0, 16).replace("T", " ") + " UTC";

  function svg(tag, attributes, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // One value per run, oldest on the left, on one scale: the favourable share of the weighed studies when every
  // run has one (its 0.35 and 0.65 marks are where the verdict turns no and yes), else the verdict's confidence.
  // A maybe's confidence is how evenly the evidence is split: beside a yes's it would read as certainty lost.
  // Both axes are drawn and labelled: the value from 0 to 1 up the left, each run's date (ISO) along the bottom.
  function chart(history) {
    const shares = history.filter((run) => typeof run.favourable_share === "number");
    const byShare = shares.length >= 2 && shares.length === history.filter((run) => run.verdict).length;
    const value = byShare ? (run) => run.favourable_share : (run) => run.confidence;
    const points = byShare ? shares : history.filter((run) => typeof run.confidence === "number");
    if (points.length < 2) return null;
    const box = svg("svg", {
      class: "confidence-chart", width: CHART_WIDTH, height: CHART_HEIGHT,
      viewBox: "0 0 " + CHART_WIDTH + " " + CHART_HEIGHT, role: "img", "font-size": 12,
    });
    box.appendChild(svg("title", {}, (byShare
      ? "Favourable share of the weighed studies (yes from 0.65, no up to 0.35) over "
      : "Verdict confidence over ") + points.length + " runs: " +
      points.map((run) => isoDate(run.run_at) + " " + value(run).toFixed(byShare ? 3 : 2)).join(", ")));
    const bottom = CHART_HEIGHT - BOTTOM;
    const y = (fraction) => TOP + (1 - fraction) * (bottom - TOP);
    box.appendChild(svg("text", { class: "axis-title", x: 0, y: 12 },
      byShare ? "Favourable share (yes from 0.65, no up to 0.35)" : "Verdict confidence"));
    // The value axis, with its marks: 0 and 1, and the thresholds (or the midpoint).
    box.appendChild(svg("line", { class: "axis", x1: LEFT, y1: TOP, x2: LEFT, y2: bottom }));
    for (const mark of byShare ? [0, 0.35, 0.65, 1] : [0, 0.5, 1]) {
      box.appendChild(svg("line", { class: "axis", x1: LEFT - 4, y1: y(mark), x2: LEFT, y2: y(mark) }));
      box.appendChild(svg("text", { x: LEFT - 7, y: y(mark) + 4, "text-anchor": "end" }, String(mark)));
      if (byShare && mark > 0 && mark < 1) {
        box.appendChild(svg("line", { class: "threshold", x1: LEFT, y1: y(mark), x2: CHART_WIDTH - RIGHT, y2: y(mark) }));
      }
    }
    // The time axis: one run a step, the first and the last run's dates under it (and each between, if room).
    box.appendChild(svg("line", { class: "axis", x1: LEFT, y1: bottom, x2: CHART_WIDTH - RIGHT, y2: bottom }));
    const step = (CHART_WIDTH - LEFT - RIGHT - 16) / (points.length - 1);
    const xy = points.map((run, i) => [LEFT + 8 + i * step, y(value(run))]);
    const labelled = step >= 80 ? points.map((_, i) => i) : [0, points.length - 1];
    for (const i of labelled) {
      const anchor = i === 0 ? "start" : i === points.length - 1 ? "end" : "middle";
      box.appendChild(svg("line", { class: "axis", x1: xy[i][0], y1: bottom, x2: xy[i][0], y2: bottom + 4 }));
      box.appendChild(svg("text", { x: xy[i][0] + (anchor === "start" ? -8 : anchor === "end" ? 8 : 0),
        y: bottom + 18, "text-anchor": anchor }, isoDate(points[i].run_at)));
    }
    box.appendChild(svg("polyline", { points: xy.map((p) => p[0].toFixed(1) + "," + p[1].toFixed(1)).join(" ") }));
    for (const [x, y] of xy) box.appendChild(svg("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: 3 }));
    return box;
  }

  // As the report words it (the server's verdict_text): a maybe's confidence is how evenly the evidence is split.
  function verdictText(run) {
    if (!run || !run.verdict) return "not run yet";
    return run.verdict_text || run.verdict;
  }

  async function showHistory(watch, item, toggle) {
    const { api, el } = window.deepcritical;
    const open = item.querySelector(".watch-details");
    if (open) {
      open.remove();
      toggle.setAttribute("aria-expanded", "false");
      return;
    }
    const view = await api("/api/watches/" + encodeURIComponent(watch.id));
    const details = el("div", null, "watch-details");
    const drawn = chart(view.history || []);
    if (drawn) details.appendChild(drawn);
    const list = el("ol", null, "watch-history");
    for (const run of view.history || []) {
      const entry = el("li", isoDate(run.run_at) + ": " + verdictText(run) +
        ", " + run.counted + " counted", run.changed ? "changed" : "");
      const lines = el("ul");
      for (const line of run.summary) lines.appendChild(el("li", line));
      entry.appendChild(lines);
      list.appendChild(entry);
    }
    details.appendChild(list);
    const feed = el("a", "Atom feed");
    feed.href = view.links.feed;
    details.appendChild(feed);
    item.appendChild(details);
    toggle.setAttribute("aria-expanded", "true");
  }

  async function loadWatches() {
    if (!window.deepcritical) return;
    const { api, el } = window.deepcritical;
    let watches;
    try {
      watches = await api("/api/watches");
    } catch (error) {
      return;
    }
    const list = $("watch-list");
    list.replaceChildren();
    for (const watch of watches) {
      const item = el("li");
      item.appendChild(el("strong", watch.question));
      item.appendChild(el("div", "every " + watch.every + " · last verdict: " + verdictText(watch.last_run) +
        " · next due " + isoTime(watch.next_due), "meta"));
      const history = el("button", "History", "secondary");
      history.type = "button";
      history.setAttribute("aria-expanded", "false");
      history.addEventListener("click", () => showHistory(watch, item, history));
      const remove = el("button", "Stop watching", "secondary");
      remove.type = "button";
      remove.addEventListener("click", async () => {
        try {
          await api("/api/watches/" + encodeURIComponent(watch.id), { method: "DELETE" });
        } catch (error) {
          $("watch-error").textContent = error.message;
          return;
        }
        loadWatches();
      });
      item.append(" ", history, " ", remove);
      list.appendChild(item);
    }
    $("no-watches").hidden = watches.length > 0;
  }

  async function addWatch(event) {
    event.preventDefault();
    const { api } = window.deepcritical;
    $("watch-error").textContent = "";
    try {
      await api("/api/watches", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ question: $("watch-question").value, every: $("watch-every").value }),
      });
    } catch (error) {
      $("watch-error").textContent = error.message;
      return;
    }
    $("watch-question").value = "";
    loadWatches();
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("watch-form").addEventListener("submit", addWatch);
    $("watch-refresh").addEventListener("click", loadWatches);
    // A server with a token: the first load was refused; load again once the token is given.
    $("token-form").addEventListener("submit", () => setTimeout(loadWatches, 0));
    loadWatches();
  });
})();
