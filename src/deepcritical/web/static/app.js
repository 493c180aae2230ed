// DeepCritical's page. Everything from a run (questions, queries, errors, gaps) is set as text, never as
// HTML; the one HTML inserted is the report, which the server renders with every outside string escaped.
"use strict";

(function () {
  const TOKEN_KEY = "deepcritical-api-token";
  const RETRY_MS = 1000;
  const state = { info: null, runId: null, follow: null };

  const $ = (id) => document.getElementById(id);

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  // --- API -----------------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  function authHeaders(extra) {
    const headers = Object.assign({}, extra || {});
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = "Bearer " + token;
    return headers;
  }

  async function api(path, options) {
    const opts = Object.assign({}, options || {});
    opts.headers = authHeaders(opts.headers);
    const response = await fetch(path, opts);
    if (response.status === 401) {
      askForToken();
      throw new ApiError(401, "This server needs its API token.");
    }
    const type = response.headers.get("content-type") || "";
    const body = type.includes("application/json") ? await response.json() : await response.text();
    if (!response.ok) {
      const message = body && body.error ? body.error : "The server answered " + response.status + ".";
      throw new ApiError(response.status, message);
    }
    return body;
  }

  window.deepcritical = { api: api, el: el }; // for watches.js: one API client, one token

  function askForToken() {
    $("token-panel").hidden = false;
    $("token").focus();
  }

  // --- Server-Sent Events over fetch (so the bearer token can be sent; EventSource cannot) ----------

  function parseEvent(block) {
    const event = { id: "", event: "message", data: [] };
    for (const line of block.split(/\r\n|\r|\n/)) {
      if (!line || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") event.data.push(value);
      else if (field === "id") event.id = value;
      else if (field === "event") event.event = value;
    }
    return event.data.length ? event : null;
  }

  // Calls onEvent for each event of the run, reconnecting with Last-Event-ID until run_ended arrives
  // (or, for a run recorded without events, until the server says the run has ended).
  async function followRun(runId, onEvent, onEnded, signal) {
    let lastId = 0;
    for (;;) {
      let ended = false;
      let closed = false;
      try {
        const headers = authHeaders({ Accept: "text/event-stream" });
        if (lastId) headers["Last-Event-ID"] = String(lastId);
        const response = await fetch("/api/runs/" + encodeURIComponent(runId) + "/events", { headers, signal });
        if (response.status === 401) return askForToken();
        if (!response.ok) throw new ApiError(response.status, "events unavailable");
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) {
            closed = true;
            break;
          }
          buffer += chunk.value;
          let match;
          while ((match = /\r\n\r\n|\n\n|\r\r/.exec(buffer))) {
            const event = parseEvent(buffer.slice(0, match.index));
            buffer = buffer.slice(match.index + match[0].length);
            if (!event) continue;
            lastId = Number(event.id) || lastId;
            const data = JSON.parse(event.data.join("\n"));
            onEvent(data);
            if (data.kind === "run_ended") ended = true;
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ApiError && error.status === 404) return;
      }
      if (ended || signal.aborted) return;
      if (closed) {
        const view = await api("/api/runs/" + encodeURIComponent(runId)).catch(() => null);
        if (view && view.status !== "queued" && view.status !== "running") return onEnded(view);
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }

  // --- Progress lines ------------------------------------------------------------------------------

  // How an event's line looks on the page. Its words are the server's: every stored event carries its line
  // (``line``), worded once for the page, MCP and the command line alike.
  function tone(event) {
    switch (event.kind) {
      case "run_started":
        return "start";
      case "iteration_started":
        return "iteration";
      case "search_finished":
        return Object.keys(event.sources_failed || {}).length ? "warn" : "";
      case "judge_finished":
        return "judge";
      case "warning":
        return event.level === "note" ? "" : "warn";
      case "run_ended":
        return event.status === "finished" ? "done" : "warn";
      default:
        return "";
    }
  }

  function describe(event) {
    return [event.line || event.kind, tone(event)];
  }

  function formatTime(iso) {
    return iso.replace("T", " ").replace("+00:00", " UTC");
  }

  // The question's frame in the report's own words (the frame's "headline", built in reading/frame.py).
  // Set as text: what the question says is never markup.
  function frameText(frame) {
    return frame && frame.headline ? "Question frame. " + frame.headline : "";
  }

  // The run's settings, as its record states them: its sources (by the names a person knows), its rounds
  // and its result reader. Set as text, like everything else from a run.
  function settingsText(view) {
    const labels = (state.info && state.info.source_labels) || {};
    const sources = (view.sources || []).map((name) => labels[name] || name).join(", ");
    const parts = [
      "Sources: " + (sources || "none"),
      "search rounds at most: " + view.max_iterations,
      "result reader: " + view.reader,
    ];
    if (view.demo) parts.push("demo");
    return parts.join(" · ");
  }

  function statusText(view) {
    if (view.status === "queued") {
      return view.position ? "Waiting in the queue (position " + view.position + ")." : "Waiting in the queue.";
    }
    if (view.status === "running") return "Running…";
    if (view.status === "finished") return "Finished.";
    return "Run " + view.status + (view.error ? ": " + view.error : ".");
  }

  // --- The run view --------------------------------------------------------------------------------

  function onRunEvent(event) {
    const [text, kind] = describe(event);
    const item = el("li", text, kind ? "event-" + kind : "");
    $("progress").appendChild(item);
    if (event.kind === "queued") {
      $("run-status").textContent = "Waiting in the queue (position " + event.position + ").";
    } else if (event.kind === "run_ended") {
      $("run-status").textContent = "Run " + event.status + (event.error ? ": " + event.error : ".");
      $("cancel").hidden = true;
      $("resume").hidden = event.status !== "interrupted";
      showResults(state.runId);
      loadRuns();
    } else {
      $("run-status").textContent = "Running…";
      $("cancel").hidden = false;
    }
  }

  async function openRun(runId, push) {
    if (state.follow) state.follow.abort();
    state.runId = runId;
    if (push) history.pushState({ run: runId }, "", "/?run=" + encodeURIComponent(runId));
    $("run").hidden = false;
    $("progress").replaceChildren();
    $("progress-box").open = true;
    $("files").replaceChildren();
    $("downloads").hidden = true;
    $("report").hidden = true;
    $("report").replaceChildren();
    $("run-question").textContent = "";
    $("run-question").hidden = false;
    $("run-frame").textContent = "";
    $("run-frame").hidden = true;
    $("run-id").textContent = "";
    $("run-settings").textContent = "";
    $("run-status").textContent = "Loading…";
    try {
      const view = await api("/api/runs/" + encodeURIComponent(runId));
      $("run-id").textContent = "Run " + view.run_id + " · started " + formatTime(view.created_at);
      $("run-settings").textContent = settingsText(view);
      $("run-question").textContent = view.question;
      $("run-frame").textContent = frameText(view.frame);
      $("run-frame").hidden = !$("run-frame").textContent;
      $("run-status").textContent = statusText(view);
      $("cancel").hidden = !(view.status === "queued" || view.status === "running");
      $("resume").hidden = view.status !== "interrupted";
    } catch (error) {
      $("run-status").textContent = error.message;
      return;
    }
    $("run-title").focus();
    const controller = new AbortController();
    state.follow = controller;
    followRun(
      runId,
      (event) => {
        if (state.runId === runId) onRunEvent(event);
      },
      (view) => {
        if (state.runId !== runId) return;
        $("run-status").textContent = statusText(view);
        $("cancel").hidden = true;
        $("resume").hidden = view.status !== "interrupted";
        showResults(runId);
      },
      controller.signal,
    );
  }

  async function showResults(runId) {
    let view;
    try {
      view = await api("/api/runs/" + encodeURIComponent(runId));
    } catch (error) {
      return;
    }
    if (state.runId !== runId) return;
    const list = $("files");
    list.replaceChildren();
    for (const name of view.files) {
      const item = el("li");
      const link = el("a", name);
      link.href = view.links[name];
      link.setAttribute("download", name);
      link.addEventListener("click", (event) => download(event, link.href, name));
      item.appendChild(link);
      list.appendChild(item);
    }
    $("downloads").hidden = view.files.length === 0;
    if (view.links["report.html"]) {
      try {
        const html = await api(view.links["report.html"]);
        if (state.runId !== runId) return;
        // Rendered by the server with raw HTML disabled, every outside string escaped, links http(s) only.
        $("report").innerHTML = html;
        $("report").hidden = false;
        // The run has finished: the answer leads, and how the run went folds away under it. The report's own
        // title and frame say the question and its frame, so the run's copies above it go.
        $("progress-box").open = false;
        $("run-question").hidden = true;
        $("run-frame").hidden = true;
        showFigures($("report"), runId);
        makeSortable($("report"));
      } catch (error) {
        $("run-status").textContent = error.message;
      }
    }
  }

  // A run's figures (the PRISMA flow, forest plots): each <img data-run-file> is fetched with the token, when
  // there is one, and shown from a blob: URL; a link to a figure file downloads it the same way.
  async function showFigures(root, runId) {
    for (const link of root.querySelectorAll("a[data-run-file][href]")) {
      link.addEventListener("click", (event) => download(event, link.href, link.dataset.runFile));
    }
    for (const image of root.querySelectorAll("img[data-run-file]")) {
      const path = "/api/runs/" + encodeURIComponent(runId) + "/" + encodeURIComponent(image.dataset.runFile);
      const response = await fetch(path, { headers: authHeaders() }).catch(() => null);
      if (!response || !response.ok || state.runId !== runId) continue; // the alt text stays, and the file link
      const url = URL.createObjectURL(await response.blob());
      image.addEventListener("load", () => URL.revokeObjectURL(url), { once: true });
      image.src = url;
    }
  }

  // The study-results table sorts by a column when its header is clicked (again: the other way). A column
  // whose every filled cell holds a number ("[3]", "21,947", "HR 0.77 [0.72, 0.82]", "< 0.001") sorts by that
  // number; others by their text. Cells without a value ("–") go last.
  const NUMBER_CELL = /^(?:\[?|[<>≤≥=] ?|[A-Za-z]+ )?(-?\d[\d,]*(?:\.\d+)?)/;

  function cellNumber(text) {
    const match = NUMBER_CELL.exec(text);
    return match ? Number(match[1].replace(/,/g, "")) : null;
  }

  function makeSortable(root) {
    for (const table of root.querySelectorAll("table.sortable")) {
      const headers = Array.from(table.querySelectorAll("thead th"));
      const body = table.tBodies[0];
      headers.forEach((header, column) => {
        if (header.classList.contains("more")) return; // each row's disclosure: nothing to sort by
        const button = el("button", header.textContent, "sort");
        button.type = "button";
        header.replaceChildren(button);
        header.setAttribute("aria-sort", "none");
        button.addEventListener("click", () => {
          const ascending = header.getAttribute("aria-sort") !== "ascending";
          for (const other of headers) other.setAttribute("aria-sort", "none");
          header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
          const rows = Array.from(body.rows);
          const texts = rows.map((row) => row.cells[column].textContent.trim());
          const filled = texts.filter((text) => text !== "–");
          const numeric = filled.length > 0 && filled.every((text) => cellNumber(text) !== null);
          const keyed = rows.map((row, index) => ({ row, text: texts[index], number: numeric ? cellNumber(texts[index]) : null }));
          keyed.sort((a, b) => {
            if ((a.text === "–") !== (b.text === "–")) return a.text === "–" ? 1 : -1; // empty last, either way
            const order = numeric ? a.number - b.number : a.text.localeCompare(b.text);
            return ascending ? order : -order;
          });
          body.append(...keyed.map((entry) => entry.row));
        });
      });
    }
  }

  // With a token, a plain link cannot authenticate: fetch the file and hand it over as a download.
  async function download(event, href, name) {
    if (!sessionStorage.getItem(TOKEN_KEY)) return;
    event.preventDefault();
    const response = await fetch(href, { headers: authHeaders() });
    if (!response.ok) return;
    const url = URL.createObjectURL(await response.blob());
    const link = el("a");
    link.href = url;
    link.download = name;
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  // --- Past runs -----------------------------------------------------------------------------------

  async function loadRuns() {
    let runs;
    try {
      runs = await api("/api/runs");
    } catch (error) {
      return;
    }
    const list = $("run-list");
    list.replaceChildren();
    for (const run of runs) {
      const item = el("li");
      const link = el("a", run.question);
      link.href = "/?run=" + encodeURIComponent(run.run_id);
      link.addEventListener("click", (event) => {
        event.preventDefault();
        openRun(run.run_id, true);
      });
      item.appendChild(link);
      // The verdict and the reader it was read with: two runs of one question (one per reader) are told apart
      // here, and a disagreement between them shows without opening either.
      const verdict = run.summary && run.summary.verdict ? " · verdict: " + run.summary.verdict.label : "";
      const reader = run.reader ? " · " + run.reader + " reader" : "";
      const meta = el("span", " " + run.status + " · " + formatTime(run.created_at) + verdict + reader,
        "meta status-" + run.status);
      item.appendChild(meta);
      list.appendChild(item);
    }
    $("no-runs").hidden = runs.length > 0;
  }

  // --- The form ------------------------------------------------------------------------------------

  const READER_LABELS = { linear: "Linear (fast)", transformer: "Transformer (slower)" };

  function fillForm(info) {
    $("demo-banner").hidden = !info.demo;
    // The server's limit, for a question to research and one to watch alike: a field's own maxlength would cut a
    // longer pasted question without a word.
    $("question").maxLength = info.max_question_chars;
    $("watch-question").maxLength = info.max_question_chars;
    const examples = $("examples");
    examples.replaceChildren();
    for (const question of info.examples) {
      const button = el("button", question, "example");
      button.type = "button";
      button.addEventListener("click", () => {
        $("question").value = question;
        $("question").focus();
      });
      examples.appendChild(button);
    }
    const sources = $("sources");
    sources.replaceChildren();
    for (const name of info.sources) {
      const label = el("label", null, "check");
      const box = el("input");
      box.type = "checkbox";
      box.name = "sources";
      box.value = name;
      box.checked = true;
      label.appendChild(box);
      const shown = (info.source_labels && info.source_labels[name]) || name;
      label.appendChild(document.createTextNode(" " + shown.charAt(0).toUpperCase() + shown.slice(1)));
      sources.appendChild(label);
    }
    $("iterations").max = String(info.max_iterations);
    $("iterations").value = String(info.max_iterations);
    // The result readers this server offers (the run request's ``reader``), its own setting chosen.
    const reader = $("reader");
    reader.replaceChildren();
    for (const name of info.readers) {
      const option = el("option", READER_LABELS[name] || name);
      option.value = name;
      reader.appendChild(option);
    }
    reader.value = info.reader;
  }

  async function submit(event) {
    event.preventDefault();
    const error = $("form-error");
    error.textContent = "";
    const question = $("question").value.trim();
    if (!question) {
      error.textContent = "Write a question first.";
      $("question").focus();
      return;
    }
    const sources = Array.from(document.querySelectorAll("input[name=sources]:checked"), (box) => box.value);
    const body = {
      question,
      sources,
      max_iterations: Number($("iterations").value) || undefined,
      reader: $("reader").value || undefined,
    };
    $("submit").disabled = true;
    try {
      const view = await api("/api/runs", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      await openRun(view.run_id, true);
      loadRuns();
    } catch (failure) {
      error.textContent = failure.message;
    } finally {
      $("submit").disabled = false;
    }
  }

  async function cancel() {
    if (!state.runId) return;
    try {
      await api("/api/runs/" + encodeURIComponent(state.runId), { method: "DELETE" });
    } catch (error) {
      $("run-status").textContent = error.message;
    }
  }

  // An interrupted run continues from its last checkpoint; its events go on where they stopped.
  async function resume() {
    if (!state.runId) return;
    try {
      await api("/api/runs/" + encodeURIComponent(state.runId) + "/resume", { method: "POST" });
      $("resume").hidden = true;
      openRun(state.runId, false);
    } catch (error) {
      $("run-status").textContent = error.message;
    }
  }

  // --- Your papers: each chosen file is sent as the request body (no multipart), one line per file ------
  async function upload(event) {
    event.preventDefault();
    const list = $("uploads");
    for (const file of Array.from($("upload-files").files)) {
      const line = document.createElement("li");
      line.textContent = file.name + ": adding…";
      list.appendChild(line);
      try {
        const result = await api("/api/library/documents?filename=" + encodeURIComponent(file.name), {
          method: "POST",
          headers: { "Content-Type": "application/octet-stream" },
          body: file,
        });
        const waiting = result.documents.filter((doc) => doc.embedded === false).length;
        line.textContent = file.name + ": " + result.documents
          .map((doc) => doc.outcome + " (" + doc.passages + " passages)")
          .join(", ") + (waiting ? "; " + waiting + " being embedded behind the server: found by their words " +
            "until then" : "");
      } catch (error) {
        line.textContent = error.message;
        line.className = "error";
      }
    }
    $("upload-files").value = "";
  }

  async function start() {
    try {
      state.info = await api("/api/info");
    } catch (error) {
      $("form-error").textContent = error.message;
      return;
    }
    fillForm(state.info);
    if (state.info.token_required && !sessionStorage.getItem(TOKEN_KEY)) askForToken();
    loadRuns();
    const runId = new URLSearchParams(location.search).get("run");
    if (runId) openRun(runId, false);
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("ask-form").addEventListener("submit", submit);
    $("cancel").addEventListener("click", cancel);
    $("resume").addEventListener("click", resume);
    $("refresh").addEventListener("click", loadRuns);
    $("upload-form").addEventListener("submit", upload);
    $("token-form").addEventListener("submit", (event) => {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
      $("token").value = "";
      $("token-panel").hidden = true;
      start();
    });
    window.addEventListener("popstate", () => {
      const runId = new URLSearchParams(location.search).get("run");
      if (runId === state.runId) return; // only the fragment changed: a citation followed to its reference
      if (runId) openRun(runId, false);
      else {
        if (state.follow) state.follow.abort();
        state.runId = null;
        $("run").hidden = true;
      }
    });
    start();
  });
})();
