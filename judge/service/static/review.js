// The review page: move through the queue, pick the evidence event, answer by mouse or keyboard.
// Answers go to POST /review/api/labels, which appends them to the labels JSONL.
(() => {
  "use strict";
  const items = Array.from(document.querySelectorAll("article.item"));
  const entries = Array.from(document.querySelectorAll(".queue-item"));
  const annotator = document.getElementById("annotator");
  const STORE = "judge.review.annotator";
  let current = -1;
  const picks = new Map(); // item index -> picked evidence event id (or null)

  if (annotator && !annotator.value && window.localStorage) {
    annotator.value = localStorage.getItem(STORE) || "";
  }
  annotator?.addEventListener("change", () => {
    if (window.localStorage) localStorage.setItem(STORE, annotator.value.trim());
  });

  const rowsOf = (article) => Array.from(article.querySelectorAll("tr.ev"));

  function select(index, { focusEntry = true } = {}) {
    if (!items.length) return;
    index = Math.max(0, Math.min(items.length - 1, index));
    items.forEach((article, i) => { article.hidden = i !== index; });
    entries.forEach((entry, i) => {
      if (i === index) entry.setAttribute("aria-current", "true");
      else entry.removeAttribute("aria-current");
    });
    current = index;
    if (!picks.has(index)) {
      const article = items[index];
      picks.set(index, article.dataset.judgeEvidence || article.dataset.ruleEvidence || null);
    }
    drawPick(index);
    if (focusEntry) entries[index].focus({ preventScroll: true });
    entries[index].scrollIntoView({ block: "nearest" });
  }

  function drawPick(index) {
    const article = items[index];
    const picked = picks.get(index) || null;
    rowsOf(article).forEach((row) => row.classList.toggle("is-picked", row.dataset.event === picked));
    const out = article.querySelector("[data-evidence-out]");
    if (out) out.textContent = picked || "none";
  }

  function moveEvidence(step) {
    const rows = rowsOf(items[current]);
    if (!rows.length) return;
    const ids = rows.map((row) => row.dataset.event);
    const at = ids.indexOf(picks.get(current));
    const next = at < 0 ? (step > 0 ? 0 : ids.length - 1) : (at + step + ids.length) % ids.length;
    picks.set(current, ids[next]);
    drawPick(current);
    rows[next].scrollIntoView({ block: "nearest" });
  }

  function say(article, text, kind) {
    const message = article.querySelector("[data-message]");
    message.textContent = text;
    message.dataset.kind = kind || "";
  }

  function drawLabels(article, state) {
    const box = article.querySelector("[data-labels-list]");
    box.replaceChildren();
    if (state.conflict) {
      const p = document.createElement("p");
      p.className = "conflict";
      p.dataset.conflict = "";
      p.textContent = "Conflicting labels on this case: all are kept; settle it with a note.";
      box.append(p);
    }
    if (!state.labels.length) return;
    const h = document.createElement("h4");
    h.textContent = "Recorded";
    const list = document.createElement("ul");
    list.className = "label-list";
    for (const row of state.labels) {
      const li = document.createElement("li");
      const verdict = document.createElement("span");
      verdict.className = `verdict v-${row.label}`;
      verdict.textContent = row.label;
      const who = document.createElement("span");
      who.className = "who";
      who.textContent = row.annotator;
      li.append(verdict, " ", who);
      if (row.evidence_event) {
        const code = document.createElement("code");
        code.textContent = row.evidence_event;
        li.append(" ", code);
      }
      if (row.note) {
        const note = document.createElement("span");
        note.className = "muted";
        note.textContent = `— ${row.note}`;
        li.append(" ", note);
      }
      list.append(li);
    }
    box.append(h, list);
  }

  function drawEntry(index, state) {
    const entry = entries[index];
    entry.classList.toggle("is-labelled", state.labels.length > 0);
    entry.classList.toggle("is-conflict", state.conflict);
    const last = state.labels[state.labels.length - 1];
    entry.querySelector("[data-state]").textContent = state.conflict ? "conflict" : (last ? last.label : "");
    document.getElementById("count-labelled").textContent =
      String(entries.filter((e) => e.classList.contains("is-labelled")).length);
    document.getElementById("count-conflicts").textContent =
      String(entries.filter((e) => e.classList.contains("is-conflict")).length);
  }

  async function answer(label) {
    if (current < 0) return;
    const index = current;
    const article = items[index];
    const name = (annotator?.value || "").trim();
    if (!name) {
      say(article, "Enter your name as annotator first (top right).", "error");
      annotator?.focus();
      return;
    }
    const typed = article.querySelector("[data-evidence-in]");
    const evidence = typed ? (typed.value.trim() || null) : (picks.get(index) || null);
    if (label === "violated" && !evidence) {
      say(article, "A violated label needs its evidence event: press e or click an event.", "error");
      return;
    }
    const note = article.querySelector("[data-note]").value.trim() || null;
    say(article, "Saving…", "");
    let response;
    try {
      response = await fetch("/review/api/labels", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        credentials: "same-origin",
        body: JSON.stringify({ case: article.dataset.case, label, evidence_event: evidence,
                               annotator: name, note }),
      });
    } catch (error) {
      say(article, `Not saved: ${error}`, "error");
      return;
    }
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      const detail = typeof body.detail === "string" ? body.detail : response.statusText;
      say(article, `Not saved: ${detail}`, "error");
      return;
    }
    if (window.localStorage) localStorage.setItem(STORE, name);
    article.querySelector("[data-note]").value = "";
    drawLabels(article, body);
    drawEntry(index, body);
    say(article, body.conflict ? `Saved ${label}; this case now has conflicting labels.` : `Saved ${label}.`,
        body.conflict ? "warn" : "ok");
    const next = entries.findIndex((e, i) => i > index && !e.classList.contains("is-labelled"));
    if (next >= 0) select(next);
  }

  entries.forEach((entry, i) => entry.addEventListener("click", () => select(i)));
  items.forEach((article, i) => {
    article.querySelectorAll(".label-btn").forEach((button) =>
      button.addEventListener("click", () => { if (i === current) answer(button.dataset.label); }));
    rowsOf(article).forEach((row) => row.addEventListener("click", () => {
      picks.set(i, picks.get(i) === row.dataset.event ? null : row.dataset.event);
      drawPick(i);
    }));
  });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    const typing = target instanceof HTMLElement &&
      (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
    if (typing) {
      if (event.key === "Escape") { target.blur(); entries[current]?.focus({ preventScroll: true }); }
      return;
    }
    const actions = {
      j: () => select(current + 1), ArrowDown: () => select(current + 1),
      k: () => select(current - 1), ArrowUp: () => select(current - 1),
      v: () => answer("violated"), u: () => answer("upheld"), n: () => answer("not-exercised"),
      e: () => moveEvidence(1), E: () => moveEvidence(-1),
      x: () => { picks.set(current, null); drawPick(current); },
      t: () => items[current]?.querySelector("[data-note]").focus(),
    };
    const action = actions[event.key];
    if (action && current >= 0) {
      event.preventDefault();
      action();
    }
  });

  const firstOpen = entries.findIndex((e) => !e.classList.contains("is-labelled"));
  if (items.length) select(firstOpen >= 0 ? firstOpen : 0, { focusEntry: false });
})();
