// The trajectory viewer of both HTML reports. In the static report (`occubench report --html`) every result is
// embedded in the page as JSON (element #occubench-data); in the live viewer (`occubench view`) the page polls
// api/state for the report's tables and the list of results, and fetches a result's full record when it is opened.
// Every string from the results goes in through textContent: model output is never parsed as markup.
// Live hints: the live viewer also lists the episodes in progress of runs started with --live-hints, each with a form
// that sends a hint (tier, text, name) to api/hint. The run's token comes only from the URL the viewer printed
// (?token=...): it is kept in this tab's sessionStorage, taken out of the address bar, and sent in the
// X-Occubench-Token header; the server never puts it in a page.
(function () {
  "use strict";
  const TEXT_LIMIT = 100000;  // longer texts show their head and a button for the rest: megabytes freeze a tab
  const POLL_MS = 1500;
  const byId = (id) => document.getElementById(id);
  const list = byId("task-list"), detail = byId("task-detail"), count = byId("task-count");
  const fRun = byId("f-run"), fCategory = byId("f-category"), fOutcome = byId("f-outcome"), fText = byId("f-text");
  const embedded = byId("occubench-data");
  let tasks = [], byKey = new Map(), shown = null, opening = 0;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function empty(v) {
    return v === undefined || v === null || v === "" || (typeof v === "object" && Object.keys(v).length === 0);
  }
  function pretty(value) {
    if (typeof value === "string") {
      try { return JSON.stringify(JSON.parse(value), null, 2); } catch (e) { return value; }
    }
    return value === undefined ? "" : JSON.stringify(value, null, 2);
  }
  function cell(value) { return typeof value === "string" ? value : JSON.stringify(value); }
  function pre(text) {
    const p = el("pre");
    text = String(text);
    p.textContent = text.length > TEXT_LIMIT ? text.slice(0, TEXT_LIMIT) : text;
    if (text.length <= TEXT_LIMIT) return p;
    const box = el("div"), more = el("button", "more", "Show all " + text.length.toLocaleString() + " characters");
    more.type = "button";
    more.addEventListener("click", () => { p.textContent = text; more.remove(); });
    box.append(p, more);
    return box;
  }
  function block(parent, label, text) { parent.append(el("div", "label", label), pre(text)); }
  function heading(title) { detail.appendChild(el("h4", null, title)); }
  function table(columns, rows, caption, textColumns) {
    const t = el("table"), head = el("tr"), body = el("tbody"), thead = el("thead");
    if (caption) t.appendChild(el("caption", null, caption));
    const cls = (i) => (i >= textColumns ? "num" : null);
    columns.forEach((c, i) => head.appendChild(el("th", cls(i), c)));
    rows.forEach((row) => {
      const tr = el("tr");
      row.forEach((c, i) => tr.appendChild(el("td", cls(i), c)));
      body.appendChild(tr);
    });
    thead.appendChild(head);
    t.append(thead, body);
    return t;
  }
  function badge(outcome) { return el("span", "badge " + outcome, outcome); }

  // ---- the list of results and its filters
  function setTasks(next) {
    tasks = next;
    byKey = new Map(tasks.map((t) => [t.key, t]));
    fillOptions(fRun, "run_index", "run");
    fillOptions(fCategory, "category", "category_label");
  }
  function fillOptions(select, field, label) {
    const seen = new Map();
    tasks.forEach((t) => seen.set(String(t[field]), String(t[label])));
    const values = Array.from(seen.entries()).sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    const chosen = select.value;
    while (select.options.length > 1) select.remove(1);
    values.forEach(([value, text]) => { const o = el("option", null, text); o.value = value; select.appendChild(o); });
    select.value = seen.has(chosen) ? chosen : "";
  }
  function matches(t) {
    const text = fText.value.trim().toLowerCase();
    return (!fRun.value || String(t.run_index) === fRun.value) &&
      (!fCategory.value || String(t.category) === fCategory.value) &&
      (!fOutcome.value || t.outcome === fOutcome.value) &&
      (!text || (t.task_id + " " + t.scenario + " " + t.domain).toLowerCase().includes(text));
  }
  function renderList() {
    const scroll = list.scrollTop, items = [];
    tasks.filter(matches).forEach((t) => {
      const a = el("a"), title = el("div", null, "#" + t.task_id + (t.trials > 1 ? " (trial " + t.trial + ")" : "") +
        " " + t.scenario);
      a.href = "#task=" + encodeURIComponent(t.key);
      a.dataset.key = t.key;
      title.appendChild(badge(t.outcome));
      a.append(title, el("div", "sub", t.run + " · " + t.category_label + " · level " + t.difficulty));
      const li = el("li");
      li.appendChild(a);
      items.push(li);
    });
    list.replaceChildren(...items);
    list.scrollTop = scroll;
    count.textContent = items.length + " of " + tasks.length + " results";
    markSelected();
  }
  function markSelected() {
    const key = currentKey();
    list.querySelectorAll("a").forEach((a) => a.classList.toggle("selected", a.dataset.key === key));
  }
  function currentKey() {
    const m = /^#task=(.*)$/.exec(location.hash);
    if (!m) return null;
    try { return decodeURIComponent(m[1]); } catch (e) { return null; }
  }

  // ---- one result
  function field(dl, name, value) {
    if (empty(value)) return;
    dl.append(el("dt", null, name), el("dd", null, value));
  }
  function contextText(value) { return value === null ? "(not found in context.jsonl)" : pretty(value); }
  function contentText(content) {
    if (Array.isArray(content)) {
      return content.map((part) => (part && typeof part.text === "string" ? part.text : pretty(part))).join("\n");
    }
    return typeof content === "string" ? content : pretty(content);
  }
  function message(parent, m, what) {
    const role = String(m.role || "?");
    const box = el("div", "msg role-" + role.replace(/[^a-z]/g, ""));
    box.appendChild(el("div", "label", role + (what ? " · " + what : "") + (m.name ? " · " + m.name : "") +
      (m.tool_call_id ? " · result of " + m.tool_call_id : "")));
    if (!empty(m.content)) box.appendChild(pre(role === "tool" ? pretty(m.content) : contentText(m.content)));
    (Array.isArray(m.tool_calls) ? m.tool_calls : []).forEach((call) => {
      const fn = (call && call.function) || {}, c = el("div", "call"), head = el("div");
      head.appendChild(el("strong", null, fn.name));
      if (call && call.id) head.appendChild(el("span", "sub", "  " + call.id));
      c.appendChild(head);
      block(c, "Arguments", pretty(fn.arguments));
      box.appendChild(c);
    });
    Object.keys(m).forEach((k) => {
      if (!["role", "content", "tool_calls", "tool_call_id", "name"].includes(k) && !empty(m[k])) {
        block(box, k, pretty(m[k]));
      }
    });
    parent.appendChild(box);
  }
  function tools(value) {
    if (!Array.isArray(value)) { block(detail, "Tools", contextText(value)); return; }
    heading("Tools (" + value.length + ")");
    value.forEach((tool) => {
      const fn = (tool && tool.function) || tool || {}, d = el("details", "tool"), s = el("summary");
      s.appendChild(el("strong", null, fn.name));
      d.appendChild(s);
      if (fn.description) d.appendChild(pre(fn.description));
      d.appendChild(pre(pretty(fn.parameters)));
      detail.appendChild(d);
    });
  }
  function conversation(t) {
    const ctx = t.context || {}, messages = Array.isArray(t.messages) ? t.messages : [];
    if (!("system_prompt" in ctx) && !("instruction" in ctx) && !messages.length) return;
    heading("Conversation");
    if ("system_prompt" in ctx) {
      message(detail, { role: "system", content: contextText(ctx.system_prompt) }, "system prompt");
    }
    if ("instruction" in ctx) {
      message(detail, { role: "user", content: contextText(ctx.instruction) }, "task instruction");
    }
    messages.forEach((m) => message(detail, m || {}));
  }
  // Each fault event is marked on its call; the ones whose call is not among the steps are returned for a table.
  function steps(t) {
    const faults = new Map((t.fault_events || []).map((f) => [f.call_index, f]));
    heading("Steps");
    if (!t.steps.length && t.trajectory) block(detail, "Trajectory (text)", t.trajectory);
    t.steps.forEach((step, i) => {
      const s = el("div", "step");
      s.appendChild(el("div", "label", "Step " + (i + 1)));
      if (step.content) s.appendChild(pre(step.content));
      (step.tool_calls || []).forEach((call) => {
        const known = call.call_index !== null && call.call_index !== undefined;
        const fault = known ? faults.get(call.call_index) : undefined;
        faults.delete(call.call_index);
        const c = el("div", fault ? "call faulted" : "call"), head = el("div");
        head.appendChild(el("strong", null, call.name));
        head.appendChild(el("span", "sub", known ? "  call " + call.call_index
          : "  (rejected before the environment)"));
        if (fault) {
          head.appendChild(el("span", "badge fault", "fault: " + fault.kind + " / " + fault.fault));
          if (fault.detail) head.appendChild(el("span", "sub", " " + fault.detail));
        }
        c.appendChild(head);
        block(c, "Arguments", pretty(call.arguments));
        block(c, "Observation", pretty(call.observation));
        s.appendChild(c);
      });
      detail.appendChild(s);
    });
    return Array.from(faults.values());
  }
  function judgePrompt(value) {
    heading("Judge prompt");
    if (!Array.isArray(value)) { block(detail, "Prompt", contextText(value)); return; }
    value.forEach((m) => message(detail, m || {}));
  }
  function votes(list) {
    heading("Judge votes");
    const ol = el("ol");
    list.forEach((v) => {
      const verdict = v.is_correct === true ? "PASS" : v.is_correct === false ? "FAIL" : "unparsable";
      const li = el("li", null, verdict + (v.attempts ? " (attempts: " + v.attempts + ")" : ""));
      if (v.feedback) li.appendChild(pre(v.feedback));
      ol.appendChild(li);
    });
    detail.appendChild(ol);
  }
  function stateDiff(diff) {
    heading("State diff");
    Object.keys(diff).forEach((name) => {
      const change = diff[name] || {};
      ["inserted", "deleted"].forEach((kind) => {
        const rows = Array.isArray(change[kind]) ? change[kind] : [];
        if (!rows.length) return;
        const columns = [];
        rows.forEach((r) => Object.keys(r || {}).forEach((c) => { if (!columns.includes(c)) columns.push(c); }));
        detail.append(el("div", "label", name + ": " + rows.length + " row(s) " + kind),
          table(columns, rows.map((r) => columns.map((c) => cell((r || {})[c]))), null, columns.length));
      });
      const updated = Array.isArray(change.updated) ? change.updated : [], rows = [];
      updated.forEach((u) => Object.entries((u && u.changes) || {}).forEach(([column, pair]) => {
        rows.push([cell(u.key), column, cell((pair || [])[0]), cell((pair || [])[1])]);
      }));
      if (rows.length) {
        detail.append(el("div", "label", name + ": " + updated.length + " row(s) updated"),
          table(["Key", "Column", "Before", "After"], rows, null, 4));
      }
    });
  }
  function verdictDetails(details) {
    const checks = Array.isArray(details.checks) ? details.checks : [];
    if (checks.length) {
      heading("Checks");
      detail.appendChild(table(["Check", "Passed", "Message"],
        checks.map((k) => [cell(k.name), k.passed ? "yes" : "no", cell(k.message || "")]), null, 3));
    }
    if (!empty(details.state_diff)) stateDiff(details.state_diff);
    if (details.judge_feedback) block(detail, "Judge feedback", details.judge_feedback);
    if (details.judge_error) block(detail, "Judge error", details.judge_error);
    const rest = Object.keys(details).filter((k) =>
      !["checks", "state_diff", "judge_label", "judge_feedback", "judge_error"].includes(k));
    rest.forEach((k) => block(detail, "Verdict details: " + k, pretty(details[k])));
  }
  function faultTables(t, events) {
    if (events.length) {
      heading("Fault events not among the steps");
      detail.appendChild(table(["Call", "Tool", "Kind", "Fault", "Detail"],
        events.map((f) => [f.call_index, f.tool, f.kind, f.fault, f.detail].map(cell)), null, 5));
    }
    if (!empty(t.fault_windows)) {
      heading("Fault windows");
      detail.appendChild(table(["First call", "Last call", "Kind", "Calls fired"],
        t.fault_windows.map((w) => [w.first_call, w.last_call, w.kind, w.fired].map(cell)), null, 4));
    }
  }
  // A twin run's calls, each answered by the real world and its simulated twin: the ones not agreeing first, side
  // by side; the agreeing ones folded away.
  function twinCall(call) {
    const agree = call.agree === true, undecided = call.by === "judge_error";
    const c = el("div", agree ? "call" : "call twin-differs"), head = el("div"), pair = el("div", "twin-pair");
    const real = el("div"), simulated = el("div");
    head.appendChild(el("strong", null, call.tool));
    head.appendChild(el("span", "sub", "  call " + call.call_index + " · decided by " + call.by));
    head.appendChild(el("span", "badge " + (agree ? "pass" : undecided ? "error" : "fail"),
      agree ? "agree" : undecided ? "undecided" : call.kind || "disagree"));
    c.appendChild(head);
    block(c, "Arguments", pretty(call.arguments));
    block(real, "Real world", pretty(call.real));
    block(simulated, "Simulated twin", pretty(call.simulated));
    pair.append(real, simulated);
    c.appendChild(pair);
    if (call.reason) block(c, "Reason", call.reason);
    return c;
  }
  function twinCalls(calls) {
    const differing = calls.filter((call) => call && call.agree !== true);
    const agreeing = calls.filter((call) => call && call.agree === true);
    heading("Twin calls: " + differing.length + " of " + calls.length + " not agreeing");
    differing.forEach((call) => detail.appendChild(twinCall(call)));
    if (!agreeing.length) return;
    const d = el("details"), s = el("summary", null, agreeing.length + " agreeing call(s)");
    d.appendChild(s);
    agreeing.forEach((call) => d.appendChild(twinCall(call)));
    detail.appendChild(d);
  }
  function usage(byRole) {
    heading("Usage");
    const rows = Object.keys(byRole).map((role) => {
      const u = byRole[role] || {}, retries = Object.entries(u.retries || {}).map(([k, n]) => k + ": " + n);
      return [role, u.calls, u.prompt_tokens, u.completion_tokens, u.cached_tokens, retries.join(", ") || "-"]
        .map(cell);
    });
    detail.appendChild(table(["Role", "Requests", "Prompt tokens", "Completion tokens", "Cached tokens", "Retries"],
      rows, null, 1));
  }
  function render(t) {
    detail.replaceChildren();
    const h = el("h3", null, "Task " + t.task_id + " · " + t.scenario), dl = el("dl");
    const details = t.verdict_details || {}, ctx = t.context || {};
    h.appendChild(badge(t.outcome));
    detail.append(h, dl);
    field(dl, "Run", t.run); field(dl, "Suite", t.suite); field(dl, "Agent", t.agent_model);
    field(dl, "World model", t.world_model); field(dl, "Verifier model", t.verifier_model);
    field(dl, "Colleague model", t.npc_model);
    field(dl, "Fault level", t.env_mode); field(dl, "Injection", t.fault_mode);
    field(dl, "Category", t.category); field(dl, "Domain", t.domain); field(dl, "Difficulty", t.difficulty);
    field(dl, "Trial", t.trial); field(dl, "Status", t.status); field(dl, "Stop reason", t.stop_reason);
    field(dl, "Judge label", details.judge_label); field(dl, "Duration (s)", t.duration_s);
    if (t.error) block(detail, "Error", (t.error.kind || "") + ": " + (t.error.message || ""));
    if ("tools" in ctx) tools(ctx.tools);
    conversation(t);
    const unmarked = steps(t);
    block(detail, "Final answer", t.final_answer || "");
    if (t.feedback) block(detail, "Verdict feedback", t.feedback);
    if ("judge_prompt" in ctx) judgePrompt(ctx.judge_prompt);
    if (!empty(t.votes)) votes(t.votes);
    verdictDetails(details);
    faultTables(t, unmarked);
    const info = Object.assign({}, t.env_info);
    if (Array.isArray(info.twin_calls)) {
      twinCalls(info.twin_calls);
      delete info.twin_calls;  // shown above
    }
    if (!empty(info)) block(detail, "Environment info", pretty(info));
    const program = t.agent_output || {};
    if (!empty(program)) {  // an outside agent's program: what it ran and printed
      block(detail, "Agent program", `${program.command || ""}\nexit status ${program.exit_code}`);
      if (program.stdout) block(detail, "Agent stdout", program.stdout);
      if (program.stderr) block(detail, "Agent stderr", program.stderr);
    }
    if (!empty(t.live_hints)) {
      heading("Live hints");
      detail.appendChild(table(["Call", "Tier", "From", "Sent", "Hint"],
        t.live_hints.map((h) => [h.step, h.tier, h.who, h.at, h.text].map(cell)), null, 5));
    }
    if (!empty(t.usage)) usage(t.usage);
  }
  function open(key) {
    const t = byKey.get(key);
    if (!t) {
      detail.replaceChildren(el("p", "sub", "No result " + key + " (yet)."));
      return;
    }
    shown = { key: key, summary: JSON.stringify(t) };
    const ticket = ++opening;  // a slow answer for a result the reader has left is dropped
    source.load(t).then((full) => { if (ticket === opening) render(full); }, (err) => {
      if (ticket === opening) detail.replaceChildren(el("p", "banner", "Cannot load " + key + ": " + err.message));
    });
    markSelected();
  }
  function fromHash() {
    const key = currentKey();
    if (key !== null) open(key);
  }

  // ---- where the results come from
  function staticSource() {
    const data = JSON.parse(embedded.textContent);
    setTasks(data.tasks);
    const resolve = (t) => {
      const values = (data.contexts || [])[t.run_index] || {}, ctx = {};
      Object.entries(t.context || {}).forEach(([kind, id]) => { ctx[kind] = id in values ? values[id] : null; });
      return Object.assign({}, t, { context: ctx });
    };
    return { load: (t) => Promise.resolve(resolve(t)) };
  }

  function reportTable(t) {
    const box = el("div");
    box.appendChild(table(t.columns, t.rows, t.title, t.text_columns));
    if (t.note) box.appendChild(el("p", "note", t.note));
    return box;
  }
  function renderReport(runs, report) {
    byId("run-errors").replaceChildren(...runs.filter((r) => r.error).map((r) => el("div", "banner", r.name + ": " +
      r.error)));
    const warnings = byId("warnings");
    warnings.hidden = !report.warnings.length;
    byId("warning-list").replaceChildren(...report.warnings.map((w) => el("li", null, w)));
    byId("live-leaderboard").replaceChildren(reportTable(report.leaderboard));
    byId("live-modes").replaceChildren(reportTable(report.modes));
    byId("live-runs").replaceChildren(...report.runs.map((r) => {
      const s = el("section", "run"), tables = el("div", "run-tables");
      s.appendChild(el("h3", null, r.name));
      tables.append(...r.tables.map(reportTable));
      s.appendChild(tables);
      return s;
    }));
  }
  function liveSource() {
    let version = -1, runCount = 0;
    const results = new Map(), status = byId("status");
    const json = (response) => (response.ok ? response.json() : response.json().then((body) => {
      throw new Error(body.error || "HTTP " + response.status);
    }));
    function update(state) {
      if (state.version === version) return;
      version = state.version;
      runCount = state.runs.length;
      Object.entries(state.results).forEach(([run, summaries]) => results.set(Number(run), summaries));
      setTasks(state.runs.flatMap((r) => results.get(r.index) || []));
      renderReport(state.runs, state.report);
      if (liveBox && Array.isArray(state.live)) renderLive(state.live);
      renderList();
      // The open result was replaced (an error retried, say): show the new one.
      const key = currentKey(), now = key === null ? undefined : byKey.get(key);
      if (now && (!shown || shown.key !== key || shown.summary !== JSON.stringify(now))) open(key);
    }
    function poll() {
      fetch("api/state?since=" + version, { cache: "no-store" }).then(json).then((state) => {
        update(state);
        status.className = "";
        status.textContent = runCount + " run(s), " + tasks.length + " result(s); checked " +
          new Date().toLocaleTimeString();
      }).catch((err) => {
        status.className = "offline";
        status.textContent = "Cannot reach the viewer (" + err.message + "); trying again.";
      }).finally(() => setTimeout(poll, POLL_MS));
    }
    poll();
    return {
      load: (t) => fetch("api/result?run=" + t.run_index + "&task=" + encodeURIComponent(t.task_id) + "&trial=" +
        t.trial, { cache: "no-store" }).then(json),
    };
  }

  // ---- live episodes and hints (the live viewer only)
  const TOKEN_KEY = "occubench-live-token", NAME_KEY = "occubench-hint-name";
  const TIER_LABELS = { 1: "1 · where to look", 2: "2 · whom to ask and what for", 3: "3 · the plan, step by step" };
  const liveBox = byId("live-episodes"), liveNodes = new Map();
  function stored(store, key, value) {
    try {
      if (value === undefined) return store.getItem(key);
      store.setItem(key, value);
    } catch (e) { /* storage refused (a private window): the value lasts as long as the page */ }
    return value;
  }
  function takeToken() {
    const params = new URLSearchParams(location.search), given = params.get("token");
    if (!given) return stored(window.sessionStorage, TOKEN_KEY);
    stored(window.sessionStorage, TOKEN_KEY, given);
    params.delete("token");  // out of the address bar (and of any bookmark or screen shared)
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
    return given;
  }
  const token = liveBox ? takeToken() : null;
  function liveStep(step) {
    const li = el("li", "live-step"), head = el("div");
    head.appendChild(el("strong", null, step.tool));
    head.appendChild(el("span", "sub", "  call " + step.call + " · " + step.at));
    li.appendChild(head);
    block(li, "Arguments", pretty(step.arguments));
    block(li, "Observation", pretty(step.observation));
    (step.hints || []).forEach((h) => li.appendChild(el("div", "hint delivered",
      "Hint delivered with this observation: tier " + h.tier + " from " + h.who + ": " + h.text)));
    return li;
  }
  function hintForm(episode) {
    const form = el("form", "hint-form"), tier = el("select"), text = el("textarea"), name = el("input");
    const send = el("button", null, "Send hint"), status = el("span", "form-status");
    tier.name = "tier"; text.name = "text"; name.name = "name";
    tier.setAttribute("aria-label", "Tier");
    text.setAttribute("aria-label", "Hint");
    name.setAttribute("aria-label", "Your name");
    [1, 2, 3].forEach((n) => {
      const o = el("option", null, TIER_LABELS[n]);
      o.value = String(n);
      tier.appendChild(o);
    });
    text.maxLength = 4000; text.required = true; text.rows = 3;
    text.placeholder = "The hint, as the agent will read it";
    name.maxLength = 100; name.required = true; name.placeholder = "Your name";
    name.value = stored(window.localStorage, NAME_KEY) || "";
    send.type = "submit";
    status.setAttribute("role", "status");
    form.append(el("label", null, "Tier "), tier, text, name, send, status);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      stored(window.localStorage, NAME_KEY, name.value);
      send.disabled = true;
      status.className = "form-status";
      status.textContent = "Sending…";
      fetch("api/hint", {
        method: "POST", cache: "no-store",
        headers: { "Content-Type": "application/json", "X-Occubench-Token": token },
        body: JSON.stringify({ run: episode.run_index, episode: episode.key, tier: Number(tier.value),
          text: text.value, name: name.value }),
      }).then((response) => response.json().then((body) => {
        if (!response.ok) throw new Error(body.error || "HTTP " + response.status);
        status.className = "form-status sent";
        status.textContent = "Sent at " + body.at + " (tier " + body.tier + "): it reaches the agent with its " +
          "next observation.";
        text.value = "";
      })).catch((err) => {
        status.className = "form-status refused";
        status.textContent = "Not sent: " + err.message;
      }).finally(() => { send.disabled = false; });
    });
    return form;
  }
  function liveEpisode(episode) {
    const node = el("article", "live-episode"), steps = el("ol", "live-steps"), sent = el("div", "live-sent");
    const title = el("h3", null, "Task " + episode.task_id + (episode.trial ? " (trial " + episode.trial + ")" : "") +
      " · " + episode.scenario);
    node.dataset.key = episode.key;
    node.append(title, el("div", "sub live-meta"), steps, sent);
    node.appendChild(token ? hintForm(episode) : el("p", "sub", "To send this episode a hint, open the URL " +
      "`occubench view` printed for its run: it carries the run's token."));
    return { node: node, steps: steps, sent: sent, meta: node.querySelector(".live-meta"), shown: "" };
  }
  function renderLive(episodes) {
    const section = byId("live"), keep = new Set();
    section.hidden = !episodes.length;
    episodes.forEach((episode) => {
      const id = episode.run_index + "/" + episode.key;
      keep.add(id);
      let entry = liveNodes.get(id);
      if (!entry) {
        entry = liveEpisode(episode);
        liveNodes.set(id, entry);
        liveBox.appendChild(entry.node);
      }
      const now = JSON.stringify([episode.steps, episode.sent, episode.calls]);
      if (now === entry.shown) return;  // the form and what is typed in it stay as they are
      entry.shown = now;
      entry.meta.textContent = episode.run + " · started " + episode.started + " · " + episode.calls + " call(s)" +
        (episode.calls > episode.steps.length ? ", the last " + episode.steps.length + " shown" : "");
      const list = entry.steps, following = !list.childElementCount ||
        list.scrollHeight - list.scrollTop - list.clientHeight < 40;
      list.replaceChildren(...episode.steps.map(liveStep));
      if (following) list.scrollTop = list.scrollHeight;  // the latest call in view, unless the reader scrolled up
      entry.sent.replaceChildren(...(episode.sent.length ? [el("div", "label", "Hints sent")] : []),
        ...episode.sent.map((h) => el("div", "hint", h.at + " · tier " + h.tier + " · " + h.who + ": " + h.text)));
    });
    liveNodes.forEach((entry, id) => {
      if (!keep.has(id)) { entry.node.remove(); liveNodes.delete(id); }
    });
  }

  const source = embedded ? staticSource() : liveSource();
  [fRun, fCategory, fOutcome].forEach((s) => s.addEventListener("change", renderList));
  fText.addEventListener("input", renderList);
  window.addEventListener("hashchange", fromHash);
  renderList();
  if (currentKey() !== null) {
    fromHash();
    // A link to one result (report.html#task=...) opens on the viewer, not the top of the page.
    byId("trajectories").scrollIntoView();
  }
})();
