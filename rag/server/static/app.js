/* rag-papers web page: ask questions, stream cited answers, read the cited abstracts.
 *
 * Plain browser JavaScript, no build step and no dependencies, so the page works offline from the package.
 * The server's contract (rag serve):
 *   GET  /api/info                 -> {papers, store, backend, years, venues, areas: [{area, papers}],
 *                                      statuses: [{status, papers}]}
 *   POST /api/ask/stream           -> Server-Sent Events: query, sources, text*, warning*, answer | error
 *   GET  /api/papers/{id}          -> {id, title, year, venue, url, area, status, keywords, abstract, sentences}
 *   GET  /api/similar?id=&k=&year=&venue=&area=&status=
 *                                  -> {of, papers: [source + {overlaps: [{yours, theirs, shared}]}]}
 *   GET  /api/export?ids=ID1,ID2&format=bibtex   -> the papers' BibTeX, as text
 *   GET  /api/trend?topic=&year=&venue=&area=&status=
 *                                  -> {topic, count, complete, judged, by_year: [{year, papers, of, share}],
 *                                      by_area: [{area, papers}], by_status: [{status, papers}], members, sample}
 * Errors outside the stream are a non-2xx response with {"error": "one line"}.
 */
"use strict";

const STORAGE_KEY = "rag-papers:conversation";
const TOKEN_KEY = "rag-papers:token";
const HISTORY_TURNS = 3; // follow-ups need only the last few exchanges (the chat remembers as many)
const DEFAULT_K = 5;
const SIMILAR_K = 5; // papers listed under "Papers like this"
// A question counted rather than answered (the Count button counts any topic): /api/trend, drawn by year.
const COUNT_QUESTION = /^\s*how\s+many\s+papers\b/i;
// One paper id inside a citation group: "001-02", or any store's id without spaces or brackets.
const ID_PATTERN = /^[A-Za-z0-9][\w.:/-]*$/;
const CITATION_GROUP = /\[([^[\]\n]{1,300})\]/g;

const $ = (selector, root = document) => root.querySelector(selector);

/** Conversation state: `turns` is what sessionStorage keeps, so a reload renders the same answers. */
const state = {
  turns: [], // {question, filters, described, answer, error, warnings, timings}, or {kind: "count", trend, …}
  views: [], // the TurnView of each turn, same order
  busy: false,
  controller: null, // aborts the answer in flight ("New conversation")
  papers: new Map(), // id -> Promise of the paper, fetched once per page
  pendingQuestion: null, // re-asked after a token is saved, when the ask was refused with 401
};

// -- small DOM helpers ------------------------------------------------------------------------------------

/** An element with attributes/properties and children (strings become text nodes, never HTML). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "dataset") Object.assign(node.dataset, value);
    // Through the CSSOM: the page's Content-Security-Policy (style-src 'self') blocks a `style` attribute.
    else if (name === "style") node.style.cssText = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

function firstWords(text, limit = 12) {
  const words = (text || "").split(/\s+/).filter(Boolean);
  return words.slice(0, limit).join(" ") + (words.length > limit ? " …" : "");
}

/** What to call a paper: the server's label or title, or (seed papers have none) the first words of its text. */
function paperLabel(source) {
  return source.label || source.title || firstWords(source.snippet || source.abstract || "") || source.id;
}

function formatMs(ms) {
  if (ms === null || ms === undefined) return "–";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

/** Relevance (the reranker's probability) as a percentage when the server gave it, else the cosine score. */
function scoreText(source) {
  if (typeof source.relevance === "number") return `${Math.round(source.relevance * 100)}%`;
  return typeof source.score === "number" ? source.score.toFixed(2) : "";
}

function scoreName(source) {
  return typeof source.relevance === "number" ? "relevance" : "cosine score";
}

function scoreFraction(source) {
  const value = typeof source.relevance === "number" ? source.relevance : source.score;
  return Math.max(0, Math.min(1, value || 0));
}

function whereFrom(source) {
  const parts = [];
  if (source.year) parts.push(String(source.year));
  if (source.venue && source.venue !== String(source.year)) parts.push(source.venue);
  if (source.status) parts.push(source.status);
  return parts.join(" · ");
}

/** A paper's page (its `url`), only when it is an http(s) address: nothing else becomes a link. */
function paperUrl(source) {
  const url = source && source.url;
  return typeof url === "string" && /^https?:\/\//i.test(url) ? url : null;
}

function hostOf(url) {
  try {
    return new URL(url).host.replace(/^www\./, "");
  } catch {
    return "the paper's page";
  }
}

/** A link to the paper's page, opened in a new tab; `text` is what it shows. */
function paperLink(url, id, text, className) {
  return el(
    "a",
    {
      class: className,
      href: url,
      target: "_blank",
      rel: "noopener noreferrer",
      title: `${id} on ${hostOf(url)}`,
      "aria-label": `Open ${id} on ${hostOf(url)} (new tab)`,
    },
    text,
  );
}

/** Scroll to the newest turn, unless the user has scrolled up to read something. */
function nearBottom() {
  return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 160;
}

function scrollToBottom() {
  window.scrollTo({ top: document.documentElement.scrollHeight });
}

// -- the API ----------------------------------------------------------------------------------------------

class AuthError extends Error {}

function token() {
  try {
    return localStorage.getItem(TOKEN_KEY) || "";
  } catch {
    return ""; // storage disabled: ask without a token
  }
}

/** fetch() for /api paths: adds the bearer token, and asks the user for one when the server answers 401. */
async function apiFetch(path, init = {}) {
  const headers = new Headers(init.headers || {});
  const saved = token();
  if (saved) headers.set("Authorization", `Bearer ${saved}`);
  const response = await fetch(path, { ...init, headers });
  if (response.status === 401) {
    showTokenForm(await errorMessage(response));
    throw new AuthError("This server needs an access token: paste it above.");
  }
  return response;
}

/** The one-line message of a failed response: its JSON {"error"} when it has one. */
async function errorMessage(response) {
  let text = "";
  try {
    text = await response.text();
    const body = JSON.parse(text);
    if (body && typeof body.error === "string") return body.error;
    if (body && typeof body.detail === "string") return body.detail; // FastAPI's own errors
  } catch {
    /* not JSON: fall through to the text */
  }
  return text.trim().split("\n")[0] || `HTTP ${response.status} ${response.statusText}`.trim();
}

async function getJson(path) {
  const response = await apiFetch(path);
  if (!response.ok) throw new Error(await errorMessage(response));
  return response.json();
}

async function getText(path) {
  const response = await apiFetch(path);
  if (!response.ok) throw new Error(await errorMessage(response));
  return response.text();
}

/** The filters chosen in the composer (year, venue, area, decision) as query parameters, for the GET calls. */
function filterParams(filters = currentFilters()) {
  const params = new URLSearchParams();
  for (const name of ["year", "venue", "area", "status"]) if (filters[name]) params.set(name, filters[name]);
  return params;
}

/** A paper, fetched at most once (the panel opens the same papers again and again). */
function getPaper(id) {
  if (!state.papers.has(id)) {
    const request = getJson(`/api/papers/${encodeURIComponent(id)}`);
    request.catch(() => state.papers.delete(id)); // a failure is retried on the next click
    state.papers.set(id, request);
  }
  return state.papers.get(id);
}

/**
 * The Server-Sent Events of a fetch() response, as {type, data} with `data` parsed from JSON.
 * EventSource cannot POST, so the stream is parsed here: "field: value" lines, an event ends at a blank
 * line, lines starting ":" are comments (keep-alive pings), several data lines join with "\n".
 */
async function* readEvents(response) {
  const reader = response.body.getReader();
  try {
    yield* splitEvents(reader);
  } finally {
    reader.cancel().catch(() => {}); // the caller stopped early (after "answer"): close the connection
  }
}

async function* splitEvents(reader) {
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
    // Normalise line ends; a "\r" at the very end may be the first half of "\r\n", so it waits for more.
    const held = !done && buffer.endsWith("\r") ? "\r" : "";
    buffer = (held ? buffer.slice(0, -1) : buffer).replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = parseEventBlock(block);
      if (event) yield event;
    }
    buffer += held;
    if (done) {
      const event = parseEventBlock(buffer); // a last event without its blank line
      if (event) yield event;
      return;
    }
  }
}

function parseEventBlock(block) {
  let type = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") type = value;
    else if (field === "data") data.push(value);
  }
  if (!data.length) return null;
  const text = data.join("\n");
  try {
    return { type, data: JSON.parse(text) };
  } catch {
    return { type, data: { text } };
  }
}

// -- answer text: paragraphs, list items, citation chips ---------------------------------------------------

/**
 * Render `text` into `container`: a paragraph per line, "- " lines as a list, and citation groups
 * ("[001-02]", "[001-02, 001-18]") as one chip per id. Text is only ever inserted as text nodes.
 */
function renderAnswerText(container, text, sources) {
  container.replaceChildren();
  let list = null;
  for (const line of text.split("\n")) {
    if (/^\s*[-•*] /.test(line)) {
      if (!list) container.append((list = el("ul")));
      list.append(withCitations(el("li"), line.replace(/^\s*[-•*] /, ""), sources));
    } else if (line.trim()) {
      list = null;
      container.append(withCitations(el("p"), line, sources));
    } else {
      list = null;
    }
  }
}

/** Append `line` to `node`, turning citation groups into chips. Returns `node`. */
function withCitations(node, line, sources) {
  let last = 0;
  for (const match of line.matchAll(CITATION_GROUP)) {
    const ids = match[1].split(/\s*[,;]\s*/).map((id) => id.trim());
    // Only a group of ids, one of them retrieved, is a citation: "[sic]" or "[0, 1]" stays text.
    if (!ids.every((id) => ID_PATTERN.test(id)) || !ids.some((id) => sources.has(id))) continue;
    node.append(line.slice(last, match.index));
    const group = el("span", { class: "cite-group" });
    for (const id of ids) group.append(chip(id, sources.get(id)));
    node.append(group);
    last = match.index + match[0].length;
  }
  node.append(line.slice(last));
  return node;
}

/** A clickable citation chip; its tooltip and accessible name say which paper and how well it scored. */
function chip(id, source) {
  if (!source) {
    // Never expected (the server checks citations against the sources), but never silently dropped either.
    return el("span", { class: "chip unknown", dataset: { id }, title: "not among the sources" }, id);
  }
  const label = `${id}: ${paperLabel(source)} (${[whereFrom(source), `${scoreName(source)} ${scoreText(source)}`]
    .filter(Boolean)
    .join(", ")})`;
  const button = el("button", { type: "button", class: "chip", dataset: { id }, "aria-label": label }, id);
  const url = paperUrl(source);
  // The chip opens the abstract here; its arrow opens the paper's own page in a new tab.
  return url ? el("span", { class: "chip-pair" }, button, paperLink(url, id, "↗", "chip-link")) : button;
}

// -- one turn of the conversation -------------------------------------------------------------------------

/** The DOM of one question and its answer; updated as events arrive, or rendered whole from storage. */
class TurnView {
  constructor(turn) {
    this.turn = turn;
    this.sources = new Map();
    this.text = "";
    this.frame = 0;
    this.parsed = el("p", { class: "parsed-query", hidden: true });
    this.body = el("div", { class: "answer", "aria-busy": "true" });
    this.statusText = el("span", {}, "Searching the abstracts…");
    const spinner = el("span", { class: "spinner", "aria-hidden": "true" });
    this.status = el("p", { class: "answer-status" }, spinner, this.statusText);
    this.banner = el("div", { class: "banner-slot" });
    this.warnings = el("ul", { class: "warnings" });
    this.error = el("p", { class: "error", role: "alert", hidden: true });
    this.sourcesHeading = el("h3", { class: "sources-heading" }, "Sources");
    this.sourcesList = el("ol", { class: "sources" });
    this.sourcesBlock = el("section", { class: "sources-block", hidden: true }, this.sourcesHeading, this.sourcesList);
    this.timings = el("p", { class: "timings", hidden: true });
    this.actions = el("div", { class: "turn-actions", hidden: true });
    this.root = el(
      "article",
      { class: "turn" },
      turnHeader(turn, this.parsed),
      el(
        "div",
        { class: "turn-answer" },
        this.banner,
        this.body,
        this.status,
        this.error,
        this.warnings,
        this.sourcesBlock,
        this.actions,
        this.timings,
      ),
    );
  }

  setQuery(data) {
    const described = data.described || describeQuery(data.query || {}, data.paper_ids || []);
    this.turn.described = described;
    this.parsed.textContent = described.replace(/^\s*↳\s*/, "");
    this.parsed.hidden = !described;
  }

  setSources(sources, cited = []) {
    this.sources = new Map(sources.map((source) => [source.id, source]));
    const citedIds = new Set(cited);
    this.sourcesList.replaceChildren(...sources.map((source) => sourceItem(source, citedIds.has(source.id))));
    this.sourcesBlock.hidden = sources.length === 0;
    this.statusText.textContent = `Reading ${sources.length} abstract${sources.length === 1 ? "" : "s"}…`;
    if (this.text) this.renderText(); // chips made before the sources came need their tooltips
  }

  appendText(piece) {
    if (!this.text) this.status.hidden = true;
    this.text += piece;
    // Re-render at most once a frame: pieces can come faster than the page needs to repaint.
    if (!this.frame) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        const follow = nearBottom();
        this.renderText();
        if (follow) scrollToBottom();
      });
    }
  }

  renderText() {
    renderAnswerText(this.body, this.text, this.sources);
  }

  addWarning(text) {
    if (!text || [...this.warnings.children].some((li) => li.textContent === text)) return;
    this.warnings.append(el("li", { class: "warning" }, text));
  }

  /** The final answer: re-rendered from its text (citations checked), with the banner and timings. */
  finish(answer, timings) {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.text = answer.answer || "";
    this.quoted = answer.quoted || {}; // paper id -> the positions of the abstract sentences the answer quotes
    this.setSources(answer.sources || [], answer.citations || []);
    this.renderText();
    for (const warning of answer.warnings || []) this.addWarning(warning);
    if (!this.turn.described && answer.query) this.setQuery({ query: answer.query });
    if (answer.abstained) {
      this.banner.replaceChildren(
        el(
          "div",
          { class: "abstained", role: "status" },
          el("strong", {}, "No paper in the store answers this"),
          el("span", {}, "The closest papers are listed below."),
        ),
      );
      this.sourcesHeading.textContent = "Closest papers";
      this.root.classList.add("is-abstained");
    }
    this.showTimings(answer, timings);
    const cited = answer.citations || [];
    if (cited.length) {
      this.actions.replaceChildren(...copyBibtexControls(cited, "the cited papers"));
      this.actions.hidden = false;
    }
    this.done("true");
  }

  showTimings(answer, timings = {}) {
    const server = answer.timings_ms || {};
    const serverParts = ["retrieve", "generate", "total"]
      .filter((name) => typeof server[name] === "number")
      .map((name) => `${name} ${formatMs(server[name])}`);
    this.timings.replaceChildren(
      el("span", {}, `First text ${formatMs(timings.firstText)}`),
      el("span", {}, `Total ${formatMs(timings.total)}`),
      serverParts.length ? el("span", {}, `Server: ${serverParts.join(" · ")}`) : null,
      answer.backend ? el("span", {}, `Backend: ${answer.backend}`) : null,
    );
    this.timings.hidden = false;
  }

  fail(message) {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    if (this.text) this.renderText(); // keep what was written before the failure
    this.error.textContent = message;
    this.error.hidden = false;
    this.done("error");
  }

  done(value) {
    this.status.hidden = true;
    this.body.removeAttribute("aria-busy");
    this.body.hidden = !this.text;
    // The test (and anything scripting the page) waits on this attribute: "true", or "error".
    this.root.dataset.done = value;
  }
}

/** A turn's question, the filters it was asked with, and the line saying how it was read. */
function turnHeader(turn, parsed) {
  const filters = describeFilters(turn.filters);
  return el(
    "header",
    { class: "turn-question" },
    el("p", { class: "question-text" }, turn.question),
    filters ? el("p", { class: "turn-filters" }, filters) : null,
    parsed,
  );
}

// -- one counted topic ----------------------------------------------------------------------------------

/** A "how many papers …?" turn: the count (or its lower bound), papers by year as bars, by decision and by area,
 * and the first papers counted as sources that open in the panel. */
class CountView {
  constructor(turn) {
    this.turn = turn;
    this.sources = new Map(); // the sample: the panel reads a source's relevance from here
    this.quoted = null;
    this.parsed = el("p", { class: "parsed-query", hidden: true });
    const spinner = el("span", { class: "spinner", "aria-hidden": "true" });
    this.status = el("p", { class: "answer-status" }, spinner, el("span", {}, "Counting the papers on this topic…"));
    this.error = el("p", { class: "error", role: "alert", hidden: true });
    this.body = el("div", { class: "count", hidden: true });
    this.root = el(
      "article",
      { class: "turn count-turn" },
      turnHeader(turn, this.parsed),
      el("div", { class: "turn-answer" }, this.status, this.error, this.body),
    );
  }

  finish(trend) {
    const n = trend.count || 0;
    const topic = trend.topic || this.turn.question;
    this.parsed.textContent = `counting: ${topic}`;
    this.parsed.hidden = false;
    const sample = trend.sample || [];
    this.sources = new Map(sample.map((source) => [source.id, source]));
    const number = trend.complete ? String(n) : `at least ${n}`;
    const headline = n
      ? el(
          "p",
          { class: "count-headline" },
          el("strong", { class: "count-number" }, number),
          ` paper${n === 1 ? "" : "s"} on `,
          el("q", {}, topic),
        )
      : el("p", { class: "count-headline" }, "No paper in the store is on ", el("q", {}, topic));
    const note = trend.complete
      ? `Each of the ${trend.judged} papers closest to the topic was judged on its own; these pass.`
      : `Papers counted reach the last of the ${trend.judged} closest papers judged: more may lie deeper.`;
    const facets = el(
      "div",
      { class: "count-facets" },
      facetList("By decision", trend.by_status || [], "status"),
      facetList("By area", trend.by_area || [], "area"),
    );
    const heading = sample.length < n ? `Papers counted: the first ${sample.length} of ${n}` : "Papers counted";
    const samples = sample.length
      ? el(
          "section",
          { class: "sources-block" },
          el("h3", { class: "sources-heading" }, heading),
          el("ol", { class: "sources" }, ...sample.map((source) => sourceItem(source, false))),
        )
      : null;
    const members = trend.members || [];
    const actions = members.length
      ? el("div", { class: "turn-actions" }, ...copyBibtexControls(members, "the papers counted"))
      : null;
    // How membership is decided and how right it measured (rag.trend.MEMBERSHIP), for the reader to weigh.
    const membership = trend.membership
      ? el("p", { class: "count-membership" }, `Membership: ${trend.membership}.`)
      : null;
    this.body.replaceChildren(
      headline,
      el("p", { class: "count-note" }, note),
      membership,
      n ? yearChart(trend.by_year || []) : null,
      n ? facets : null,
      samples,
      actions,
    );
    this.body.hidden = false;
    this.done("true");
  }

  fail(message) {
    this.error.textContent = message;
    this.error.hidden = false;
    this.done("error");
  }

  done(value) {
    this.status.hidden = true;
    this.root.dataset.done = value;
  }
}

function facetList(title, items, key) {
  if (!items.length) return null;
  return el(
    "div",
    { class: "count-facet" },
    el("h4", {}, title),
    el(
      "ul",
      {},
      ...items.map((item) =>
        el(
          "li",
          {},
          el("span", { class: "facet-name" }, String(item[key])),
          el("span", { class: "facet-count" }, String(item.papers)),
        ),
      ),
    ),
  );
}

const SVG_NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  node.append(...children);
  return node;
}

/** Papers by year as an inline SVG bar chart, a year without any drawn as 0 between the first and the last;
 * under each year its share of the store's papers of that year, when the server knows it (an unfiltered count). */
function yearChart(byYear) {
  const known = new Map(byYear.filter((row) => Number.isInteger(row.year)).map((row) => [row.year, row]));
  const years = [...known.keys()].sort((a, b) => a - b);
  if (!years.length) return null;
  const rows = [];
  for (let year = years[0]; year <= years[years.length - 1]; year++) {
    rows.push(known.get(year) || { year, papers: 0, of: null, share: null });
  }
  const most = Math.max(1, ...rows.map((row) => row.papers));
  const [bar, gap, top, plot, foot] = [44, 22, 22, 110, 40];
  const width = gap + rows.length * (bar + gap);
  const height = top + plot + foot;
  const said = rows.map((row) => `${row.year}: ${row.papers}`).join(", ");
  const chart = svg("svg", {
    class: "year-chart",
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": `Papers by year: ${said}`,
  });
  chart.append(svg("line", { class: "chart-axis", x1: gap / 2, x2: width - gap / 2, y1: top + plot, y2: top + plot }));
  rows.forEach((row, i) => {
    const x = gap + i * (bar + gap);
    const h = row.papers ? Math.max(3, Math.round((plot * row.papers) / most)) : 0;
    const share = typeof row.share === "number" ? `${(row.share * 100).toFixed(1)}%` : "";
    const of = row.of ? ` of the store's ${row.of}` : "";
    const said = `${row.year}: ${row.papers} paper${row.papers === 1 ? "" : "s"}${of}${share ? ` (${share})` : ""}`;
    const middle = { x: x + bar / 2, "text-anchor": "middle" };
    chart.append(
      svg(
        "g",
        { class: "year-bar", "data-year": row.year, "data-papers": row.papers },
        svg("title", {}, said),
        svg("rect", { x, y: top + plot - h, width: bar, height: h, rx: 3 }),
        svg("text", { class: "bar-value", ...middle, y: top + plot - h - 6 }, String(row.papers)),
        svg("text", { class: "bar-year", ...middle, y: top + plot + 16 }, String(row.year)),
        share ? svg("text", { class: "bar-share", ...middle, y: top + plot + 32 }, share) : "",
      ),
    );
  });
  const caption = "Papers by year (under each year: its share of the store's papers of that year)";
  return el("figure", { class: "year-figure" }, chart, el("figcaption", {}, caption));
}

// -- copy BibTeX ------------------------------------------------------------------------------------------

/** A "Copy BibTeX" button for the papers `ids`, its feedback, and the box the text is shown in when the browser
 * keeps the clipboard from the page (no secure context, permission refused). */
function copyBibtexControls(ids, what) {
  const status = el("span", { class: "copy-status", role: "status" });
  const fallback = el("div", { class: "copy-fallback", hidden: true });
  const button = el(
    "button",
    { type: "button", class: "button small copy-bibtex", title: `BibTeX for ${what} (${ids.length})` },
    "Copy BibTeX",
  );
  button.addEventListener("click", () => copyBibtex(ids, button, status, fallback));
  return [button, status, fallback];
}

async function copyBibtex(ids, button, status, fallback) {
  button.disabled = true;
  status.classList.remove("copy-error");
  status.textContent = "Fetching BibTeX…";
  fallback.hidden = true;
  const entries = `${ids.length} BibTeX entr${ids.length === 1 ? "y" : "ies"}`;
  try {
    const text = await getText(`/api/export?${new URLSearchParams({ ids: ids.join(","), format: "bibtex" })}`);
    try {
      if (!navigator.clipboard || !navigator.clipboard.writeText) throw new Error("no clipboard here");
      await navigator.clipboard.writeText(text);
      status.textContent = `Copied ${entries}`;
    } catch {
      const box = el("textarea", {
        class: "copy-text",
        readonly: true,
        spellcheck: "false",
        rows: String(Math.min(12, text.split("\n").length)),
        "aria-label": entries,
      });
      box.value = text;
      const why = "This browser keeps the clipboard from the page: copy them from here.";
      fallback.replaceChildren(el("p", {}, why), box);
      fallback.hidden = false;
      status.textContent = `${entries} below`;
      box.focus({ preventScroll: true });
      box.select();
    }
  } catch (error) {
    status.textContent = error.message;
    status.classList.add("copy-error");
  } finally {
    button.disabled = false;
  }
}

function describeFilters(filters = {}) {
  const parts = [];
  if (filters.year) parts.push(`year ${filters.year}`);
  if (filters.venue) parts.push(filters.venue);
  if (filters.area) parts.push(`area ${filters.area}`);
  if (filters.status) parts.push(filters.status);
  if (filters.k && filters.k !== DEFAULT_K) parts.push(`${filters.k} sources`);
  return parts.join(" · ");
}

/** The "↳ searching: …" line from the query object, when the server sent no `described`. */
function describeQuery(query, paperIds) {
  if (!query.search) return "";
  const parts = [`searching: ${query.search}`];
  if (query.year) parts.push(`year ${query.year}`);
  if (query.venue) parts.push(query.venue);
  if (query.area) parts.push(`area ${query.area}`);
  if (query.status) parts.push(query.status);
  if (paperIds.length) parts.push(`papers ${paperIds.join(", ")}`);
  return parts.join(" · ");
}

function sourceItem(source, cited) {
  const fraction = scoreFraction(source);
  return el(
    "li",
    { class: cited ? "source cited" : "source", dataset: { id: source.id } },
    el(
      "button",
      { type: "button", class: "source-open", "aria-label": `Open ${source.id}: ${paperLabel(source)}` },
      el("span", { class: "source-id" }, source.id),
      el(
        "span",
        { class: "source-text" },
        el("span", { class: "source-label" }, paperLabel(source)),
        el("span", { class: "source-meta" }, whereFrom(source)),
      ),
    ),
    paperUrl(source) ? paperLink(paperUrl(source), source.id, `${hostOf(paperUrl(source))} ↗`, "source-link") : null,
    el(
      "span",
      { class: "score", title: `${scoreName(source)} ${scoreText(source)}` },
      el("span", { class: "score-value" }, scoreText(source)),
      el(
        "span",
        { class: "score-bar", "aria-hidden": "true" },
        el("span", { style: `width: ${Math.round(fraction * 100)}%` }),
      ),
    ),
  );
}

// -- asking -----------------------------------------------------------------------------------------------

function currentFilters() {
  const k = parseInt($("#k").value, 10);
  return {
    year: $("#year").value ? parseInt($("#year").value, 10) : null,
    venue: $("#venue").value || null,
    area: $("#area").value || null,
    status: $("#status").value || null,
    k: Number.isFinite(k) && k > 0 ? k : DEFAULT_K,
  };
}

/** The previous answered turns, as the server's follow-up rules read them. */
function conversationHistory() {
  return state.turns
    .filter((turn) => turn.answer && !turn.error)
    .slice(-HISTORY_TURNS)
    .map((turn) => ({ question: turn.question, answer: turn.answer.answer || "" }));
}

function addTurn(turn) {
  const view = turn.kind === "count" ? new CountView(turn) : new TurnView(turn);
  state.turns.push(turn);
  state.views.push(view);
  $("#conversation").append(view.root);
  $("#welcome").hidden = true;
  return view;
}

async function ask(question, filters = currentFilters()) {
  question = question.trim();
  if (!question || state.busy) return;
  const history = conversationHistory();
  const turn = { question, filters, described: "", answer: null, error: null, timings: {} };
  const view = addTurn(turn);
  setBusy(true);
  updateUrl(question, filters);
  scrollToBottom();

  const controller = new AbortController();
  state.controller = controller;
  const started = performance.now();
  const body = { question, k: filters.k };
  if (filters.year) body.year = filters.year;
  if (filters.venue) body.venue = filters.venue;
  if (filters.area) body.area = filters.area;
  if (filters.status) body.status = filters.status;
  if (history.length) body.history = history;

  try {
    const response = await apiFetch("/api/ask/stream", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    if (!response.ok) throw new Error(await errorMessage(response));
    for await (const { type, data } of readEvents(response)) {
      // Follow the answer down the page as it grows, unless the user scrolled up to read something.
      const follow = nearBottom();
      handleEvent(type, data, turn, view, started);
      if (follow) scrollToBottom();
      if (turn.answer || turn.error) break;
    }
    if (!turn.answer && !turn.error) throw new Error("The answer stopped before it finished (the connection closed).");
  } catch (error) {
    if (controller.signal.aborted) return; // "New conversation": the turn is gone already
    if (error instanceof AuthError) state.pendingQuestion = { question, filters, turn, kind: "ask" };
    turn.error = error instanceof TypeError ? `Could not reach the server (${error.message}).` : error.message;
    const follow = nearBottom();
    view.fail(turn.error);
    if (follow) scrollToBottom();
  } finally {
    if (state.controller === controller) {
      state.controller = null;
      setBusy(false);
      saveConversation();
    }
  }
}

/** Count the papers on the question's topic (GET /api/trend, the filters applied) as a turn of its own. */
async function count(question, filters = currentFilters()) {
  question = question.trim();
  if (!question || state.busy) return;
  filters = { ...filters, k: null }; // a count reads the whole store, not k sources
  const turn = { kind: "count", question, filters, trend: null, error: null };
  const view = addTurn(turn);
  setBusy(true, "Counting…");
  updateUrl(question, filters, !COUNT_QUESTION.test(question));
  scrollToBottom();
  const controller = new AbortController();
  state.controller = controller;
  const params = filterParams(filters);
  params.set("topic", question);
  try {
    const response = await apiFetch(`/api/trend?${params}`, { signal: controller.signal });
    if (!response.ok) throw new Error(await errorMessage(response));
    turn.trend = await response.json();
    view.finish(turn.trend);
    const n = turn.trend.count;
    $("#announcer").textContent = `${turn.trend.complete ? "" : "At least "}${n} paper${n === 1 ? "" : "s"} counted.`;
  } catch (error) {
    if (controller.signal.aborted) return;
    if (error instanceof AuthError) state.pendingQuestion = { question, filters, turn, kind: "count" };
    turn.error = error instanceof TypeError ? `Could not reach the server (${error.message}).` : error.message;
    view.fail(turn.error);
  } finally {
    if (state.controller === controller) {
      state.controller = null;
      setBusy(false);
      saveConversation();
    }
    if (nearBottom()) scrollToBottom();
  }
}

/** One event of the answer stream. */
function handleEvent(type, data, turn, view, started) {
  switch (type) {
    case "query":
      view.setQuery(data);
      break;
    case "sources":
      view.setSources(data.sources || []);
      break;
    case "text":
      if (turn.timings.firstText === undefined) turn.timings.firstText = performance.now() - started;
      view.appendText(data.text || "");
      break;
    case "warning":
      view.addWarning(data.text || data.warning || "");
      break;
    case "answer": {
      turn.timings.total = performance.now() - started;
      turn.answer = data.answer || data;
      view.finish(turn.answer, turn.timings);
      announce(turn.answer);
      break;
    }
    case "error":
      turn.error = data.error || data.text || "The server failed to answer.";
      view.fail(turn.error);
      break;
    default:
      break; // an event this page does not know yet: ignore it rather than fail
  }
}

/** One line for screen readers when an answer is complete (the streaming text itself is not announced). */
function announce(answer) {
  const cited = (answer.citations || []).length;
  $("#announcer").textContent = answer.abstained
    ? "No paper in the store answers this."
    : `Answer ready, citing ${cited} paper${cited === 1 ? "" : "s"}.`;
}

function setBusy(busy, doing = "Answering…") {
  state.busy = busy;
  const button = $("#ask");
  button.disabled = busy;
  $("#count").disabled = busy;
  button.textContent = busy ? doing : "Ask";
  button.setAttribute("aria-busy", String(busy));
}

/** Keep the address bar shareable: `?q=`, any filters that differ from the defaults, and `count=1` for a topic
 * counted with the Count button (a "how many papers …?" question is counted anyway). */
function updateUrl(question, filters, counted = false) {
  const params = new URLSearchParams({ q: question });
  if (counted) params.set("count", "1");
  if (filters.year) params.set("year", filters.year);
  if (filters.venue) params.set("venue", filters.venue);
  if (filters.area) params.set("area", filters.area);
  if (filters.status) params.set("status", filters.status);
  if (filters.k && filters.k !== DEFAULT_K) params.set("k", filters.k);
  history.replaceState(null, "", `${location.pathname}?${params}`);
}

// -- the conversation in sessionStorage ---------------------------------------------------------------------

function saveConversation() {
  const turns = state.turns.filter((turn) => turn.answer || turn.trend || turn.error);
  try {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify(turns));
  } catch {
    /* storage full or disabled: the conversation just won't survive a reload */
  }
}

/** Render the stored turns again: the final answer objects carry everything the chips and panel need. */
function restoreConversation() {
  let turns = [];
  try {
    turns = JSON.parse(sessionStorage.getItem(STORAGE_KEY) || "[]");
  } catch {
    turns = [];
  }
  for (const turn of Array.isArray(turns) ? turns : []) {
    if (!turn || typeof turn.question !== "string") continue;
    const view = addTurn(turn);
    if (turn.kind === "count") {
      if (turn.trend) view.finish(turn.trend);
      else view.fail(turn.error || "This topic was not counted.");
      continue;
    }
    if (turn.described) view.setQuery({ described: turn.described });
    if (turn.answer) view.finish(turn.answer, turn.timings || {});
    else view.fail(turn.error || "This question was not answered.");
  }
}

function newConversation() {
  if (state.controller) state.controller.abort();
  state.controller = null;
  setBusy(false);
  state.turns = [];
  state.views = [];
  state.pendingQuestion = null;
  $("#conversation").replaceChildren();
  $("#welcome").hidden = false;
  closePanel();
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    /* nothing stored */
  }
  history.replaceState(null, "", location.pathname);
  $("#question").focus();
}

// -- the paper panel ----------------------------------------------------------------------------------------

let panelTrigger = null; // the chip that opened the panel gets the focus back when it closes
let panelRequest = 0; // only the latest click fills the panel

const MIN_MATCH_CHARS = 16; // a shorter "sentence" ("See below.") would match a snippet by chance
const normalise = (text) => (text || "").replace(/\s+/g, " ").trim();
// Looser: case and punctuation aside. The raw snippet keeps LaTeX and brackets the display sentences have tidied.
const loose = (text) =>
  (text || "")
    .toLowerCase()
    .replace(/\\[a-z]+/g, " ") // LaTeX commands: "\emph{x}" reads "x", as the display sentence has it
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();

/** Whether `sentence` occurs in `text` (given as normalise(text) and loose(text)). */
function occursIn(sentence, normalised, loosened) {
  const exact = normalise(sentence);
  if (exact.length < MIN_MATCH_CHARS) return false;
  if (normalised.includes(exact)) return true;
  const words = loose(sentence);
  return loosened.includes(words);
}

/**
 * Which of the paper's sentences to highlight: those the answer says it quotes (`quoted`: their positions, as
 * the server sent them); when it quotes none (an LLM writes its own words), those in the passage retrieval matched.
 */
function highlighted(sentences, quoted, source) {
  if (quoted && quoted.length) return { marks: sentences.map((_, i) => quoted.includes(i)), why: "quoted" };
  const snippet = (source && source.snippet) || "";
  const matched = sentences.map((s) => occursIn(s, normalise(snippet), loose(snippet)));
  return { marks: matched, why: matched.some(Boolean) ? "matched" : "none" };
}

async function openPaper(id, view, trigger) {
  const panel = $("#paper-panel");
  const request = ++panelRequest;
  panelTrigger = trigger || null;
  const source = view ? view.sources.get(id) : null;
  $("#panel-meta").textContent = id;
  $("#panel-title").textContent = (source && source.title) || `Abstract of ${id}`;
  $("#panel-details").replaceChildren();
  $("#panel-keywords").replaceChildren();
  $("#panel-note").textContent = "";
  $("#panel-abstract").replaceChildren(el("p", { class: "panel-loading" }, "Loading the abstract…"));
  panel.dataset.id = id;
  resetSimilar();
  panel.hidden = false;
  panel.scrollTop = 0;
  document.body.classList.add("panel-open");
  $("#panel-close").focus({ preventScroll: true });
  try {
    const paper = await getPaper(id);
    if (request === panelRequest) fillPanel(paper, view, source);
  } catch (error) {
    if (request !== panelRequest) return;
    $("#panel-abstract").replaceChildren(el("p", { class: "error", role: "alert" }, error.message));
  }
}

function fillPanel(paper, view, source) {
  const score = source ? `${scoreName(source)} ${scoreText(source)}` : "";
  $("#panel-meta").textContent = [paper.id, paper.venue || paper.year, score].filter(Boolean).join(" · ");
  // An untitled paper (the seeds) is headed by its id, not by words the abstract repeats just below.
  $("#panel-title").textContent = paper.title || `Abstract of ${paper.id}`;
  // The decision and the primary area, then the link to the paper's own page.
  const url = paperUrl(paper);
  const details = [
    paper.status ? el("span", { class: "panel-status" }, paper.status) : null,
    paper.area ? el("span", { class: "panel-area" }, paper.area) : null,
    url ? paperLink(url, paper.id, `${hostOf(url)} ↗`, "panel-link") : null,
  ].filter(Boolean);
  $("#panel-details").replaceChildren(...details);
  $("#panel-keywords").replaceChildren(...(paper.keywords || []).map((word) => el("li", {}, word)));
  const sentences = paper.sentences && paper.sentences.length ? paper.sentences : [paper.abstract || ""];
  const { marks, why } = highlighted(sentences, view && view.quoted ? view.quoted[paper.id] : null, source);
  $("#panel-note").textContent = {
    quoted: "Highlighted: the sentences the answer quotes.",
    matched: "Highlighted: the passage the search matched (the answer does not quote it word for word).",
    none: "",
  }[why];
  const abstract = el("p");
  sentences.forEach((sentence, i) => {
    if (i) abstract.append(" ");
    abstract.append(marks[i] ? el("mark", {}, sentence) : sentence);
  });
  $("#panel-abstract").replaceChildren(abstract);
}

// -- papers like this (in the panel) ---------------------------------------------------------------------

function resetSimilar() {
  const box = $("#panel-similar");
  box.replaceChildren();
  box.hidden = true;
  delete box.dataset.done;
  $("#similar-button").disabled = false;
}

/** The papers closest to the panel's paper (the composer's filters applied), each with the sentences that make it
 * close; clicking one's id opens it here. */
async function showSimilar() {
  const id = $("#paper-panel").dataset.id;
  if (!id) return;
  const request = panelRequest; // opening another paper (or closing) makes this answer stale
  const filters = currentFilters();
  const box = $("#panel-similar");
  const button = $("#similar-button");
  button.disabled = true;
  delete box.dataset.done;
  box.hidden = false;
  box.replaceChildren(el("p", { class: "panel-loading" }, "Finding papers like this…"));
  const params = filterParams(filters);
  params.set("id", id);
  params.set("k", String(SIMILAR_K));
  try {
    const data = await getJson(`/api/similar?${params}`);
    if (request !== panelRequest) return;
    renderSimilar(box, id, data.papers || [], filters);
    box.dataset.done = "true";
  } catch (error) {
    if (request !== panelRequest) return;
    box.replaceChildren(el("p", { class: "error", role: "alert" }, error.message));
    box.dataset.done = "error";
  } finally {
    if (request === panelRequest) button.disabled = false;
  }
}

function renderSimilar(box, id, papers, filters) {
  const scope = describeFilters({ ...filters, k: null });
  const heading = el("h3", { class: "sources-heading" }, `Papers like ${id}${scope ? ` · ${scope}` : ""}`);
  if (!papers.length) {
    box.replaceChildren(heading, el("p", { class: "panel-note" }, "No paper like this among the papers filtered."));
    return;
  }
  const note = el("p", { class: "panel-note" }, "Closeness 0–1; marked: the topic words the two sentences share.");
  box.replaceChildren(heading, note, el("ol", { class: "similar-list" }, ...papers.map(similarItem)));
}

function similarItem(paper) {
  const url = paperUrl(paper);
  const label = paperLabel(paper);
  const overlap = (paper.overlaps || [])[0];
  const closeness = typeof paper.score === "number" ? paper.score.toFixed(2) : "";
  return el(
    "li",
    { class: "similar", dataset: { id: paper.id } },
    el(
      "div",
      { class: "similar-head" },
      el(
        "button",
        { type: "button", class: "chip similar-open", dataset: { id: paper.id }, "aria-label": `Open ${paper.id}` },
        paper.id,
      ),
      url ? paperLink(url, paper.id, label, "similar-link") : el("span", { class: "similar-label" }, label),
      el("span", { class: "similar-score", title: "closeness (mean best-chunk cosine)" }, closeness),
    ),
    el("p", { class: "similar-meta" }, whereFrom(paper)),
    overlap
      ? el(
          "div",
          { class: "overlap" },
          overlapSentence("This paper", overlap.yours, overlap.shared),
          overlapSentence(paper.id, overlap.theirs, overlap.shared),
        )
      : null,
  );
}

function overlapSentence(whose, sentence, shared) {
  return el("p", {}, el("span", { class: "overlap-who" }, whose), " ", ...markShared(sentence, shared));
}

const WORD = /[\p{L}\p{N}]+(?:[-'’][\p{L}\p{N}]+)*/gu;

/** `sentence` as text and <mark>s: the words it shares with `shared` (the server gives them as one sentence writes
 * them, so "clusters" in one and "clustering" in the other are matched by their common stem). */
function markShared(sentence, shared) {
  const words = (shared || []).map((word) => word.toLowerCase());
  const parts = [];
  let last = 0;
  for (const match of (sentence || "").matchAll(WORD)) {
    const word = match[0].toLowerCase();
    if (!words.some((other) => sameStem(word, other))) continue;
    parts.push(sentence.slice(last, match.index), el("mark", {}, match[0]));
    last = match.index + match[0].length;
  }
  parts.push((sentence || "").slice(last));
  return parts;
}

function sameStem(a, b) {
  if (a === b) return true;
  const shorter = Math.min(a.length, b.length);
  let common = 0;
  while (common < shorter && a[common] === b[common]) common++;
  return common >= 4 && common >= shorter - 3;
}

function closePanel() {
  const panel = $("#paper-panel");
  if (panel.hidden) return;
  panel.hidden = true;
  panelRequest++;
  document.body.classList.remove("panel-open");
  if (panelTrigger && document.contains(panelTrigger)) panelTrigger.focus({ preventScroll: true });
  panelTrigger = null;
}

// -- the chip tooltip -------------------------------------------------------------------------------------

function showTip(chipNode) {
  const view = viewOf(chipNode);
  const source = view && view.sources.get(chipNode.dataset.id);
  if (!source) return;
  const tip = $("#chip-tip");
  const details = [source.id, whereFrom(source), `${scoreName(source)} ${scoreText(source)}`];
  tip.replaceChildren(
    el("strong", {}, paperLabel(source)),
    el("span", {}, details.filter(Boolean).join(" · ")),
  );
  tip.hidden = false;
  const box = chipNode.getBoundingClientRect();
  const width = tip.offsetWidth;
  const left = Math.max(8, Math.min(box.left + box.width / 2 - width / 2, window.innerWidth - width - 8));
  const above = box.top - tip.offsetHeight - 8;
  tip.style.left = `${left + window.scrollX}px`;
  tip.style.top = `${(above > 8 ? above : box.bottom + 8) + window.scrollY}px`;
  chipNode.setAttribute("aria-describedby", "chip-tip");
}

function hideTip() {
  $("#chip-tip").hidden = true;
}

function viewOf(node) {
  const article = node.closest(".turn");
  return state.views.find((view) => view.root === article) || null;
}

// -- the token --------------------------------------------------------------------------------------------

function showTokenForm(message) {
  $("#token-form").hidden = false;
  $("#token").title = message || ""; // the server's own words, for whoever set the token up
  $("#token").focus();
}

function saveToken(event) {
  event.preventDefault();
  const value = $("#token").value.trim();
  if (!value) return;
  try {
    localStorage.setItem(TOKEN_KEY, value);
  } catch {
    /* storage disabled: nothing to keep it in */
  }
  $("#token").value = "";
  $("#token-form").hidden = true;
  state.papers.clear(); // refused before: fetch again with the token
  loadInfo();
  // The question refused for want of a token is asked again, in place of its failed turn.
  const pending = state.pendingQuestion;
  state.pendingQuestion = null;
  if (pending) {
    const index = state.turns.indexOf(pending.turn);
    if (index >= 0) {
      state.views[index].root.remove();
      state.turns.splice(index, 1);
      state.views.splice(index, 1);
    }
    (pending.kind === "count" ? count : ask)(pending.question, pending.filters);
  }
}

// -- start-up ---------------------------------------------------------------------------------------------

/** The store's size, backend, and the years, venues, areas and decisions the filters offer. */
async function loadInfo() {
  const info = $("#store-info");
  try {
    const data = await getJson("/api/info");
    const papers = typeof data.papers === "number" ? `${data.papers.toLocaleString()} papers` : "";
    info.textContent = [papers, data.backend].filter(Boolean).join(" · ");
    info.title = data.store ? `Store: ${data.store}` : "";
    fillSelect($("#year"), data.years || []);
    fillSelect($("#venue"), data.venues || []);
    fillFacet($("#area"), data.areas || [], "area");
    fillFacet($("#status"), data.statuses || [], "status");
  } catch (error) {
    info.textContent = error instanceof AuthError ? "Token needed" : "Server unavailable";
    info.title = error.message;
  }
}

function fillSelect(select, values) {
  const chosen = select.value;
  const options = values.map((value) => el("option", { value: String(value) }, String(value)));
  select.replaceChildren(el("option", { value: "" }, "Any"), ...options);
  select.value = values.map(String).includes(chosen) ? chosen : "";
}

/** A select of facet values, each shown with its papers: "learning theory (20)". */
function fillFacet(select, items, key) {
  const chosen = select.value;
  const values = items.map((item) => String(item[key]));
  const options = items.map((item) => el("option", { value: String(item[key]) }, `${item[key]} (${item.papers})`));
  select.replaceChildren(el("option", { value: "" }, "Any"), ...options);
  select.value = values.includes(chosen) ? chosen : "";
}

/** Set a select to `value`, adding the option when /api/info did not list it (a deep link may name it). */
function choose(select, value) {
  if (!value) return;
  if (![...select.options].some((option) => option.value === value)) select.append(el("option", { value }, value));
  select.value = value;
}

/** `/?q=...&year=&venue=&area=&status=&k=`: fill the form and ask, unless a reload restored that very question. */
function runDeepLink() {
  const params = new URLSearchParams(location.search);
  const question = (params.get("q") || "").trim();
  choose($("#year"), params.get("year"));
  choose($("#venue"), params.get("venue"));
  choose($("#area"), params.get("area"));
  choose($("#status"), params.get("status"));
  if (params.get("k")) $("#k").value = params.get("k");
  if (!question) return;
  const last = state.turns[state.turns.length - 1];
  if (last && last.question === question) return; // the URL of the last answer, kept by replaceState
  $("#question").value = question;
  if (params.get("count")) takeQuestion(true);
  else $("#ask-form").requestSubmit(); // the same path as typing it: the box empties, the turn starts
}

function growTextarea() {
  const box = $("#question");
  box.style.height = "auto";
  box.style.height = `${Math.min(box.scrollHeight, 220)}px`;
}

function submitQuestion(event) {
  event.preventDefault();
  takeQuestion(false);
}

/** The question box's text, asked; or counted, with the Count button or when it asks "how many papers …?". */
function takeQuestion(counted) {
  const box = $("#question");
  if (state.busy || !box.value.trim()) return;
  const question = box.value;
  box.value = "";
  growTextarea();
  startTurn(question, counted);
}

function startTurn(question, counted = false) {
  if (counted || COUNT_QUESTION.test(question)) count(question);
  else ask(question);
}

function wireEvents() {
  $("#ask-form").addEventListener("submit", submitQuestion);
  $("#count").addEventListener("click", () => takeQuestion(true));
  $("#question").addEventListener("keydown", (event) => {
    // Enter asks, Shift+Enter is a new line; never while an input method is composing a character.
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("#ask-form").requestSubmit();
    }
  });
  $("#question").addEventListener("input", growTextarea);
  $("#new-conversation").addEventListener("click", newConversation);
  $("#token-form").addEventListener("submit", saveToken);
  $("#panel-close").addEventListener("click", closePanel);
  $("#similar-button").addEventListener("click", showSimilar);
  $("#panel-similar").addEventListener("click", (event) => {
    const target = event.target.closest(".similar-open[data-id]");
    if (target) openPaper(target.dataset.id, null, panelTrigger); // focus still goes back to the first chip
  });
  for (const example of document.querySelectorAll(".example")) {
    example.addEventListener("click", () => startTurn(example.textContent));
  }
  // One listener for every chip and source row, present and future.
  $("#conversation").addEventListener("click", (event) => {
    const target = event.target.closest(".chip[data-id], .source[data-id] .source-open");
    if (!target) return;
    const id = target.dataset.id || target.closest("[data-id]").dataset.id;
    hideTip();
    openPaper(id, viewOf(target), target);
  });
  for (const type of ["mouseover", "focusin"]) {
    $("#conversation").addEventListener(type, (event) => {
      const target = event.target.closest(".chip[data-id]");
      if (target) showTip(target);
    });
  }
  for (const type of ["mouseout", "focusout"]) {
    $("#conversation").addEventListener(type, (event) => {
      if (event.target.closest(".chip[data-id]")) hideTip();
    });
  }
  window.addEventListener("scroll", hideTip, { passive: true });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      hideTip();
      closePanel();
    }
  });
}

async function start() {
  wireEvents();
  restoreConversation();
  if (state.turns.length) scrollToBottom();
  await loadInfo(); // the filters' options first, so a deep link's year/venue can be selected
  runDeepLink();
  if (!state.busy) $("#question").focus({ preventScroll: true });
}

start();
