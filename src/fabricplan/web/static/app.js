// fabricplan page: plain JavaScript, no libraries, nothing loaded from outside this server.
// The spec lives in one object (state.spec); the form, the what-if sliders and the YAML editor are
// three views of it. Any change re-runs the analytic compare (debounced) and redraws the answer.
"use strict";

const TECH_NAMES = { infiniband: "InfiniBand", roce_v2: "RoCEv2", roce_v1: "RoCEv1" };
const TECH_COLORS = { infiniband: "#2f5bd3", roce_v2: "#d9622b", roce_v1: "#3a9a5b" };
// The decision's one money scale, as report/table.py MONEY_TERMS prints it.
const MONEY_TERMS = [
  ["capex_usd", "capex"], ["energy_usd", "energy"], ["support_usd", "support"], ["staff_usd", "staff"],
  ["gpu_time_usd", "GPU time the fabric idles"], ["growth_usd", "growth"],
  ["config_risk_usd", "configuration risk"], ["worth_usd", "minus user-set worth"], ["total_usd", "total"],
];
const DEFAULT_SPEC = {
  name: "my-cluster",
  cluster: { gpus: 2048, gpus_per_node: 8, nics_per_node: 8, nic_speed_gbps: 400, gpu: "h100" },
  fabric: { technologies: ["infiniband", "roce_v2"], topology: "rail_optimized", oversubscription: 1 },
  team: { infiniband: "some", ethernet_dcb: "some" },
  priorities: "balanced",
  workload: { model: "llama3-70b" },
};
const DEBOUNCE_MS = 200;
const POLL_MS = 400;
const GPU_SLIDER = { min: 64, max: 131072 };

const state = {
  spec: structuredClone(DEFAULT_SPEC), answer: null, catalog: null, prices: {},
  timer: null, yamlTimer: null, lintFiles: [], benchFiles: [], watched: new Set(),
  shownJob: null, jobStatus: {}, inFlight: false, pending: false, armed: false,
};

const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
const techName = (t) => TECH_NAMES[t] || t;

// ---------- numbers ----------
function money(usd) {
  if (usd == null) return "–";
  const a = Math.abs(usd);
  if (a >= 1e9) return `$${(usd / 1e9).toFixed(2)}B`;
  if (a >= 1e6) return `$${(usd / 1e6).toFixed(2)}M`;
  if (a >= 1e3) return `$${(usd / 1e3).toFixed(0)}k`;
  return `$${usd.toFixed(0)}`;
}
function size(bytes) {
  const units = ["B", "K", "M", "G", "T"];
  let i = 0, v = bytes;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v >= 10 || Number.isInteger(v) ? v.toFixed(0) : v.toFixed(1)}${units[i]}`;
}
const num = (v, d = 1) => (v == null ? "–" : Number(v).toLocaleString("en-US", { maximumFractionDigits: d }));
function gbps(v) { return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v >= 1 ? v.toFixed(2) : String(Number(v.toPrecision(2))); }
function timeUs(us) {
  if (us >= 1e6) return `${(us / 1e6).toFixed(2)} s`;
  if (us >= 1e3) return `${(us / 1e3).toFixed(us >= 1e4 ? 0 : 1)} ms`;
  return `${us >= 10 ? us.toFixed(0) : us.toFixed(1)} µs`;
}

// ---------- the API ----------
async function api(path, body, opts = {}) {
  const init = { method: body === undefined ? "GET" : "POST", headers: {} };
  if (body !== undefined) {
    if (opts.yaml) { init.headers["content-type"] = "application/yaml"; init.body = body; }
    else { init.headers["content-type"] = "application/json"; init.body = JSON.stringify(body); }
  }
  const response = await fetch(path, init);
  if (!response.ok) {
    let line = `${response.status} ${response.statusText}`;
    try { line = (await response.json()).error || line; } catch (_) { /* not JSON */ }
    throw new Error(line);
  }
  return opts.text ? response.text() : response.json();
}

function showError(id, error) {
  const el = $(id);
  if (!error) { el.hidden = true; el.textContent = ""; return; }
  el.hidden = false; el.textContent = error.message || String(error);
}

// ---------- spec paths ----------
function getPath(obj, path) {
  return path.split(".").reduce((o, k) => (o == null ? undefined : o[k]), obj);
}
function setPath(obj, path, value) {
  const keys = path.split(".");
  if (value === undefined) {  // remove the key, and every mapping left empty above it
    const chain = [obj];
    for (const k of keys.slice(0, -1)) { const next = chain.at(-1)?.[k]; if (typeof next !== "object" || next === null) return; chain.push(next); }
    delete chain.at(-1)[keys.at(-1)];
    for (let i = chain.length - 1; i > 0; i--) if (Object.keys(chain[i]).length === 0) delete chain[i - 1][keys[i - 1]];
    return;
  }
  let o = obj;
  for (const k of keys.slice(0, -1)) { if (typeof o[k] !== "object" || o[k] === null) o[k] = {}; o = o[k]; }
  o[keys.at(-1)] = value;
}
function parseKind(kind, raw, el) {
  if (kind === "bool") return el.checked;
  if (kind === "opt") return raw === "" ? undefined : raw;
  if (kind === "optint") return raw === "" ? undefined : Number.parseInt(raw, 10);
  if (kind === "int") return Number.parseInt(raw, 10);
  if (kind === "float") return Number.parseFloat(raw);
  if (kind === "tiers") return raw === "auto" ? "auto" : Number.parseInt(raw, 10);
  return raw;
}

// ---------- YAML (a small emitter; the server parses what the user types) ----------
function yamlScalar(v) {
  if (v === null || v === undefined) return "null";
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  const s = String(v);
  return /^[A-Za-z_][A-Za-z0-9_.\-]*$/.test(s) && !/^(true|false|null|yes|no|on|off|~)$/i.test(s) ? s : JSON.stringify(s);
}
function toYaml(value, indent = "") {
  const lines = [];
  for (const [key, v] of Object.entries(value)) {
    const k = yamlScalar(key);
    if (Array.isArray(v)) {
      if (v.every((x) => typeof x !== "object" || x === null)) lines.push(`${indent}${k}: [${v.map(yamlScalar).join(", ")}]`);
      else { lines.push(`${indent}${k}:`); for (const x of v) lines.push(`${indent}  - ${JSON.stringify(x)}`); }
    } else if (v && typeof v === "object") {
      if (Object.keys(v).length === 0) lines.push(`${indent}${k}: {}`);
      else { lines.push(`${indent}${k}:`); lines.push(toYaml(v, indent + "  ")); }
    } else lines.push(`${indent}${k}: ${yamlScalar(v)}`);
  }
  return lines.join("\n");
}

// ---------- the form ----------
function fillForm() {
  const spec = state.spec;
  document.querySelectorAll("#side [data-path]").forEach((el) => {
    const v = getPath(spec, el.dataset.path) ?? getPath(state.answer?.spec, el.dataset.path);
    if (document.activeElement === el) return;
    if (el.dataset.kind === "bool") el.checked = v === undefined || v === null ? el.dataset.default === "true" : Boolean(v);
    else if (v !== undefined && v !== null && typeof v !== "object") el.value = String(v);
    else if (el.dataset.kind === "opt" || el.dataset.kind === "optint") el.value = "";
  });
  const techs = getPath(spec, "fabric.technologies") || ["infiniband", "roce_v2"];
  document.querySelectorAll("#f-techs input").forEach((box) => { box.checked = techs.includes(box.value); });
  const pr = spec.priorities ?? "balanced";
  $("f-priorities").value = typeof pr === "string" ? pr : "balanced";
  fillWhatIf();
}

function gpusToSlider(g) {
  const t = Math.log(g / GPU_SLIDER.min) / Math.log(GPU_SLIDER.max / GPU_SLIDER.min);
  return Math.round(Math.min(1, Math.max(0, t)) * 100);
}
function sliderToGpus(p) {
  const gpn = getPath(state.spec, "cluster.gpus_per_node") || 8;
  const g = GPU_SLIDER.min * Math.pow(GPU_SLIDER.max / GPU_SLIDER.min, p / 100);
  const nice = g >= 4096 ? 1024 : g >= 512 ? 128 : gpn;
  return Math.max(gpn, Math.round(g / nice) * nice);
}
function gpuHourItem() { return `gpu-hour-${getPath(state.spec, "cluster.gpu") || "h100"}`; }

function fillWhatIf() {
  const gpus = getPath(state.spec, "cluster.gpus") || 0;
  $("o-gpus").textContent = num(gpus, 0);
  if (document.activeElement !== $("w-gpus")) $("w-gpus").value = gpusToSlider(gpus);
  const over = getPath(state.spec, "fabric.oversubscription") ?? 1;
  $("o-over").textContent = `${over}:1`;
  $("w-over").value = over;
  const item = gpuHourItem();
  const given = getPath(state.spec, "cost.prices")?.[item];
  const hour = given ?? state.prices[item] ?? 0;
  $("o-gpuhour").textContent = `$${Number(hour).toFixed(2)}/GPU-h${given == null ? " (estimate)" : ""}`;
  if (document.activeElement !== $("w-gpuhour")) $("w-gpuhour").value = hour;
}

function buildPriceInputs() {
  const switches = state.answer?.hardware?.switches || {};
  const ids = [...new Set(Object.values(switches))];
  const given = getPath(state.spec, "cost.prices") || {};
  const key = ids.join(",");
  if ($("w-prices").dataset.ids === key) {
    ids.forEach((id) => { const el = $(`w-price-${id}`); if (el && document.activeElement !== el) el.value = given[id] ?? state.prices[id] ?? ""; });
    return;
  }
  $("w-prices").dataset.ids = key;
  $("w-prices").innerHTML = `<div class="small muted">Switch prices (USD each; blank = the catalog estimate)</div>` +
    ids.map((id) => `<label>${esc(id)}<input id="w-price-${esc(id)}" type="number" min="0" step="500" data-price="${esc(id)}" value="${esc(given[id] ?? state.prices[id] ?? "")}"></label>`).join("");
}

function bindForm() {
  document.querySelectorAll("#side [data-path]").forEach((el) => {
    el.addEventListener(el.type === "range" ? "input" : "change", () => {
      const v = parseKind(el.dataset.kind, el.value, el);
      if (typeof v === "number" && Number.isNaN(v)) return;
      setPath(state.spec, el.dataset.path, v);
      specChanged();
    });
  });
  $("f-techs").addEventListener("change", () => {
    const techs = [...document.querySelectorAll("#f-techs input:checked")].map((b) => b.value);
    setPath(state.spec, "fabric.technologies", techs);
    if (state.spec.fabric.switch) for (const t of Object.keys(state.spec.fabric.switch)) if (!techs.includes(t)) delete state.spec.fabric.switch[t];
    specChanged();
  });
  $("f-priorities").addEventListener("change", () => {
    state.spec.priorities = $("f-priorities").value;
    specChanged();
  });
  $("w-gpus").addEventListener("input", () => {
    setPath(state.spec, "cluster.gpus", sliderToGpus(Number($("w-gpus").value)));
    specChanged();
  });
  $("w-gpuhour").addEventListener("input", () => {
    setPath(state.spec, `cost.prices`, { ...(getPath(state.spec, "cost.prices") || {}), [gpuHourItem()]: Number($("w-gpuhour").value) });
    specChanged();
  });
  $("w-prices").addEventListener("change", (ev) => {
    const id = ev.target.dataset.price;
    if (!id) return;
    const prices = { ...(getPath(state.spec, "cost.prices") || {}) };
    if (ev.target.value === "") delete prices[id]; else prices[id] = Number(ev.target.value);
    setPath(state.spec, "cost.prices", prices);
    specChanged();
  });
  $("yaml").addEventListener("input", () => {
    clearTimeout(state.yamlTimer);
    state.yamlTimer = setTimeout(yamlEdited, 400);
  });
}

function specChanged() {
  $("yaml").value = toYaml(state.spec) + "\n";
  showError("yaml-error", null);
  fillForm();
  scheduleCompare();
  try { localStorage.setItem("fabricplan.spec", JSON.stringify(state.spec)); } catch (_) { /* private mode */ }
}

async function yamlEdited() {
  try {
    const doc = await api("/api/spec", $("yaml").value, { yaml: true });
    state.spec = doc.spec;
    showError("yaml-error", null);
    fillForm();
    scheduleCompare();
    try { localStorage.setItem("fabricplan.spec", JSON.stringify(state.spec)); } catch (_) { /* private mode */ }
  } catch (error) { showError("yaml-error", error); }
}

// ---------- compare ----------
function scheduleCompare() {
  clearTimeout(state.timer);
  $("busy").hidden = false;  // stays up until the answer for the latest change is shown
  state.armed = true;
  state.timer = setTimeout(() => { state.armed = false; runCompare(); }, DEBOUNCE_MS);
}

// One compare in flight at a time: changes made meanwhile coalesce into one more run after it,
// so dragging a slider never queues a pile of requests on the server.
async function runCompare() {
  if (state.inFlight) { state.pending = true; return; }
  state.inFlight = true;
  $("busy").hidden = false;
  try {
    const answer = await api("/api/compare", { spec: structuredClone(state.spec) });
    state.answer = answer;
    showError("compare-error", null);
    render(answer);
    document.body.dataset.answers = String(Number(document.body.dataset.answers || 0) + 1);
  } catch (error) {
    showError("compare-error", error);
  } finally {
    state.inFlight = false;
    if (state.pending) { state.pending = false; runCompare(); }
    else if (!state.armed) $("busy").hidden = true;
  }
}

function render(doc) {
  renderRecommendation(doc);
  renderOptions(doc);
  renderPlots(doc);
  renderStep(doc);
  renderAssumptions(doc);
  buildPriceInputs();
  fillForm();
}

function renderRecommendation(doc) {
  const rec = doc.recommendation;
  const el = $("recommendation");
  if (!rec) { el.innerHTML = "<p class='muted'>No recommendation.</p>"; return; }
  const ranked = rec.ranking;
  const years = ranked.length ? ranked[0].money.years : 0;
  const head = `<tr><th></th>${ranked.map((r, i) => `<th class="n"><span class="swatch" style="background:${TECH_COLORS[r.technology] || "#888"}"></span>${i + 1}. ${esc(techName(r.technology))}</th>`).join("")}</tr>`;
  const rows = MONEY_TERMS.map(([field, label]) => `<tr class="${field === "total_usd" ? "total" : ""}" data-term="${field}"><td>${esc(label)}</td>${ranked.map((r) => `<td class="n">${money(r.money[field])}</td>`).join("")}</tr>`).join("");
  const step = `<tr><td>step (uncertainty band)</td>${ranked.map((r) => `<td class="n">${r.money.step_s.toFixed(3)} s (${r.money.step_low_s.toFixed(3)}-${r.money.step_high_s.toFixed(3)})</td>`).join("")}</tr>`;
  const versus = (r) => { const g = r.versus_fastest; return g ? `+${g.difference_pct.toFixed(1)} % (±${g.band_pct.toFixed(1)} %), ${g.inside ? "inside: level" : "outside"}` : "fastest"; };
  const gap = ranked.some((r) => r.versus_fastest) ? `<tr><td>step longer than the fastest (band of the difference)</td>${ranked.map((r) => `<td class="n">${esc(versus(r))}</td>`).join("")}</tr>` : "";
  const unmet = `<tr><td>constraints not met</td>${ranked.map((r) => `<td class="n">${esc(r.unmet.join("; ") || "-")}</td>`).join("")}</tr>`;
  const infeasible = (rec.infeasible || doc.infeasible || []).map((o) => `<li><b>${esc(techName(o.technology))}</b> cannot be built: ${esc(o.message)}</li>`).join("");
  const notMoney = (rec.not_money || []).map((r) => `<li>${esc(r)}</li>`).join("");
  el.innerHTML = `<p class="verdict" id="verdict">Recommended: <b>${esc(techName(rec.technology))}</b>
      <span class="muted small">for ${num(doc.spec.cluster.gpus, 0)} × ${esc(doc.hardware.node)} GPUs, priorities ${esc(rec.preset)}</span></p>
    <p class="small" id="objective">Preset <b>${esc(rec.preset)}</b> ranks by ${esc(rec.objective)}.</p>
    <div class="rec-grid"><div>
      <table class="t" id="money"><caption class="small muted">money over ${years} years (ranked)</caption>${head}${rows}${step}${gap}${unmet}</table></div>
      <div><h4>Why</h4><ul id="reasons">${rec.reasons.slice(0, 6).map((r) => `<li>${esc(r)}</li>`).join("")}</ul>
      <h4>What would change it</h4><ul id="flips">${rec.flips.slice(0, 6).map((f) => `<li>${esc(f.description)}</li>`).join("") || "<li class='muted'>nothing within the ranges tried</li>"}</ul>
      ${notMoney ? `<h4>Not priced</h4><ul id="not-money">${notMoney}</ul>` : ""}
      ${infeasible ? `<h4>Not buildable</h4><ul>${infeasible}</ul>` : ""}</div></div>`;
}

function renderOptions(doc) {
  $("options").innerHTML = doc.options.map((o) => {
    const d = o.design, c = o.cost, p = o.performance, ops = o.ops;
    const color = TECH_COLORS[o.technology] || "#888";
    const winner = doc.recommendation?.technology === o.technology;
    const tiers = d.tier_designs.map((t) => `<tr><td>${esc(t.name)}</td><td class="n">${num(t.switches, 0)}</td><td class="n">${t.radix}</td><td class="n">${num(t.down_ports, 0)} / ${num(t.up_ports, 0)}</td><td class="n">${num(t.ports_free, 0)}</td></tr>`).join("");
    const bom = c.lines.map((l) => `<tr><td>${esc(l.item)}</td><td>${esc(l.kind)}</td><td class="n">${num(l.quantity, 0)}</td><td class="n">${money(l.unit_price_usd)}</td><td class="n">${money(l.total_usd)}</td><td class="muted">${esc(l.basis)}</td></tr>`).join("");
    const tasks = ops.tasks.slice(0, 6).map((t) => `<li>${esc(t)}</li>`).join("");
    const findings = (d.findings || []).map((f) => `<li>${esc(f.message || f.what || JSON.stringify(f))}</li>`).join("");
    return `<article class="option" style="--c:${color}" data-tech="${esc(o.technology)}">
      <div class="title"><h3>${esc(techName(o.technology))}</h3>${winner ? '<span class="badge">recommended</span>' : ""}</div>
      <div class="muted small">${esc(d.switch_id)} · ${d.radix}-port ${d.port_speed_gbps}G · ${esc(d.topology.replace("_", "-"))} · ${d.tiers} tiers${d.planes > 1 ? ` · ${d.planes} planes` : ""}</div>
      <div class="kpis">
        <div class="kpi"><div class="v">${money(c.capex_usd)}</div><div class="k">network capex</div></div>
        <div class="kpi"><div class="v">${money(c.tco_usd)}</div><div class="k">TCO ${c.years} y</div></div>
        <div class="kpi"><div class="v">${money(c.tco_with_gpu_idle_usd ?? c.tco_usd)}</div><div class="k">TCO + idle GPU time</div></div>
        <div class="kpi"><div class="v">${p.step ? p.step.step_s.toFixed(2) + " s" : "–"}</div><div class="k">training step</div></div>
        <div class="kpi"><div class="v">${num(d.switches_total, 0)}</div><div class="k">switches</div></div>
        <div class="kpi"><div class="v">${num(c.power_w / 1000, 1)} kW</div><div class="k">fabric power</div></div>
      </div>
      <h4>Design</h4><div class="drawing">${fabricDrawing(d, color)}</div>
      <table class="t"><tr><th>tier</th><th class="n">switches</th><th class="n">radix</th><th class="n">down / up</th><th class="n">free</th></tr>${tiers}</table>
      <div class="small muted">bisection ${num(d.bisection_tbps, 1)} Tb/s · up to ${num(d.max_endpoints, 0)} endpoints · worst path ${d.worst_case_switch_hops} switches · ${num(d.links_total, 0)} links</div>
      <h4>Bill of materials and cost</h4>
      <table class="t"><tr><th>item</th><th>kind</th><th class="n">qty</th><th class="n">unit</th><th class="n">total</th><th>basis</th></tr>${bom}</table>
      <div class="small muted">opex ${money(c.opex_usd_per_year)}/y (energy ${money(c.energy_usd_per_year)}, support ${money(c.support_usd_per_year)}, staff ${money(c.operations_usd_per_year)}) · ${money(c.per_gpu_usd)} per GPU · idle GPU time ${money(c.gpu_idle_usd)}</div>
      <h4>Operations</h4>
      <div class="small">${ops.engineer_years_per_year.toFixed(2)} engineer-years/year (${num(ops.hours_per_year, 0)} h) · clouds: ${esc(ops.cloud_availability)} · ${ops.vendors} vendor${ops.vendors > 1 ? "s" : ""}</div>
      <ul class="small">${tasks}</ul>
      ${findings ? `<h4>Design notes</h4><ul class="small">${findings}</ul>` : ""}
    </article>`;
  }).join("");
}

// ---------- drawings ----------
function svgEl(w, h, body) { return `<svg viewBox="0 0 ${w} ${h}" xmlns="http://www.w3.org/2000/svg" role="img">${body}</svg>`; }

function fabricDrawing(d, color) {
  const rows = [];
  const sw = d.switches || {};
  if (sw.core) rows.push(["core", sw.core]);
  if (sw.spine) rows.push(["spine", sw.spine]);
  rows.push(["leaf", sw.leaf || 0]);
  rows.push(["nodes", d.nodes]);
  const W = 520, rowH = 46, H = rows.length * rowH + 8, maxBoxes = 16;
  let body = "";
  const xs = rows.map(([, n]) => {
    const shown = Math.min(n, maxBoxes);
    const gap = (W - 150) / Math.max(shown, 1);
    return Array.from({ length: shown }, (_, i) => 120 + gap * (i + 0.5));
  });
  rows.forEach(([, n], r) => {
    if (r === 0) return;
    const y1 = 8 + (r - 1) * rowH + 22, y2 = 8 + r * rowH + 4;
    for (const a of xs[r - 1]) for (const b of xs[r]) {
      if (xs[r - 1].length * xs[r].length > 160 && Math.abs(a - b) > 120) continue;
      body += `<line x1="${a}" y1="${y1}" x2="${b}" y2="${y2}" stroke="${color}" stroke-opacity=".18"/>`;
    }
  });
  rows.forEach(([name, n], r) => {
    const y = 8 + r * rowH;
    body += `<text x="4" y="${y + 17}" font-weight="600">${name}</text><text x="4" y="${y + 31}" fill="#667085">× ${num(n, 0)}</text>`;
    const isNode = name === "nodes";
    xs[r].forEach((x) => {
      body += isNode
        ? `<rect x="${x - 7}" y="${y + 4}" width="14" height="18" rx="2" fill="#e9edf3" stroke="#98a2b3"/>`
        : `<rect x="${x - 11}" y="${y + 6}" width="22" height="14" rx="3" fill="${color}" fill-opacity=".85"/>`;
    });
    if (n > maxBoxes) body += `<text x="${W - 26}" y="${y + 18}" fill="#667085">…</text>`;
  });
  return svgEl(W, H, body);
}

function logTicks(lo, hi, base, step = base === 2 ? 10 : 1) {
  const ticks = [];
  const b = base === 2 ? 2 : 10;
  let e = Math.floor(Math.log(lo) / Math.log(b) / step) * step;
  for (; Math.pow(b, e) <= hi * 1.0001; e += step) if (Math.pow(b, e) >= lo / 1.0001) ticks.push(Math.pow(b, e));
  return ticks;
}

// series: [{name, color, dash, points: [{x, y, lo, hi}], markers}]
function logPlot(series, opt) {
  const W = 560, H = 300, L = 68, R = 16, T = 10, B = 40;
  const pts = series.flatMap((s) => s.points).filter((p) => p.y > 0 && p.x > 0);
  if (!pts.length) return "<p class='muted'>no points</p>";
  const xs = pts.map((p) => p.x), ys = pts.flatMap((p) => [p.y, p.lo || p.y, p.hi || p.y]).filter((v) => v > 0);
  const x0 = Math.min(...xs), x1 = Math.max(...xs);
  const y0 = Math.pow(10, Math.floor(Math.log10(Math.min(...ys)))), y1 = Math.pow(10, Math.ceil(Math.log10(Math.max(...ys))));
  const X = (x) => L + (W - L - R) * (Math.log(x / x0) / Math.log(Math.max(x1 / x0, 1.0001)));
  const Y = (y) => T + (H - T - B) * (1 - Math.log(y / y0) / Math.log(Math.max(y1 / y0, 1.0001)));
  let body = "";
  const xfmt = opt.xfmt || size;
  for (const t of logTicks(x0, x1, 2, opt.xstep)) body += `<line class="grid" x1="${X(t)}" x2="${X(t)}" y1="${T}" y2="${H - B}"/><text x="${X(t)}" y="${H - B + 14}" text-anchor="middle">${xfmt(t)}</text>`;
  for (const t of logTicks(y0, y1, 10)) body += `<line class="grid" x1="${L}" x2="${W - R}" y1="${Y(t)}" y2="${Y(t)}"/><text x="${L - 5}" y="${Y(t) + 4}" text-anchor="end">${opt.yfmt(t)}</text>`;
  body += `<line class="axis" x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}"/><line class="axis" x1="${L}" x2="${L}" y1="${T}" y2="${H - B}"/>`;
  body += `<text x="${(L + W - R) / 2}" y="${H - 6}" text-anchor="middle">${esc(opt.xlabel)}</text>`;
  body += `<text transform="translate(11 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${esc(opt.ylabel)}</text>`;
  for (const s of series) {
    const band = s.points.filter((p) => p.lo > 0 && p.hi > 0);
    if (band.length > 1) {
      const upper = band.map((p) => `${X(p.x)},${Y(p.hi)}`), lower = band.slice().reverse().map((p) => `${X(p.x)},${Y(p.lo)}`);
      body += `<polygon points="${upper.concat(lower).join(" ")}" fill="${s.color}" fill-opacity=".13" stroke="none"/>`;
    }
  }
  for (const s of series) {
    const line = s.points.filter((p) => p.y > 0).map((p) => `${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`).join(" ");
    if (!s.markersOnly) body += `<polyline points="${line}" fill="none" stroke="${s.color}" stroke-width="2" ${s.dash ? 'stroke-dasharray="5 4"' : ""}/>`;
    if (s.markers || s.markersOnly) for (const p of s.points) if (p.y > 0) body += `<circle cx="${X(p.x)}" cy="${Y(p.y)}" r="3.2" fill="${p.color || s.color}"><title>${esc(s.name)} ${(opt.xfmt || size)(p.x)}: ${opt.yfmt(p.y)}${p.note ? " — " + esc(p.note) : ""}</title></circle>`;
  }
  const legend = `<div class="legend">${series.filter((s) => s.legend !== false).map((s) => `<span><i style="background:${s.color}"></i>${esc(s.name)}</span>`).join("")}</div>`;
  return svgEl(W, H, body) + legend;
}

function renderPlots(doc) {
  const op = $("p-collective").value;
  const series = doc.options.map((o) => ({
    name: techName(o.technology), color: TECH_COLORS[o.technology] || "#888",
    points: o.performance.collectives.filter((c) => c.collective === op).map((c) => ({
      x: c.size_bytes, y: c.busbw_GBps, lo: c.busbw_GBps_low, hi: c.busbw_GBps_high, t: c.time_us, tlo: c.time_us_low, thi: c.time_us_high,
    })),
  }));
  $("plot-busbw").innerHTML = logPlot(series, { xlabel: "message size (bytes)", ylabel: "busbw (GB/s)", yfmt: gbps });
  const timeSeries = series.map((s) => ({ ...s, points: s.points.map((p) => ({ x: p.x, y: p.t, lo: p.tlo, hi: p.thi })) }));
  $("plot-time").innerHTML = logPlot(timeSeries, { xlabel: "message size (bytes)", ylabel: "time", yfmt: timeUs });
}

function renderStep(doc) {
  const steps = doc.options.filter((o) => o.performance.step);
  if (!steps.length) { $("step").innerHTML = "<p class='muted'>no training step modelled</p>"; return; }
  const longest = Math.max(...steps.map((o) => o.performance.step.compute_s + o.performance.step.comm_total_s));
  $("step").innerHTML = steps.map((o) => {
    const s = o.performance.step;
    const hidden = Math.max(0, s.comm_total_s - s.comm_exposed_s);
    const pct = (v) => (100 * v / longest).toFixed(2);
    const dims = Object.entries(s.comm_by_dimension_s).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v.toFixed(3)} s`).join(" · ");
    return `<div class="stepbar"><span>${esc(techName(o.technology))}</span>
      <span class="bar" title="compute ${s.compute_s.toFixed(3)} s, exposed communication ${s.comm_exposed_s.toFixed(3)} s, hidden behind compute ${hidden.toFixed(3)} s">
        <span class="seg-compute" style="width:${pct(s.compute_s)}%"></span><span class="seg-exposed" style="width:${pct(s.comm_exposed_s)}%"></span><span class="seg-hidden" style="width:${pct(hidden)}%"></span></span>
      <span><b>${s.step_s.toFixed(3)} s</b>${s.step_s_low != null ? `<div class="stepband">${s.step_s_low.toFixed(2)}–${s.step_s_high.toFixed(2)} s</div>` : ""}</span></div>
      <div class="small muted" style="margin-left:118px">communication ${s.comm_total_s.toFixed(3)} s (${dims}); ${(100 * s.exposed_fraction).toFixed(1)} % of the step exposed; ${num(s.gpu_hours_lost_per_year, 0)} GPU-hours a year idle</div>`;
  }).join("") + `<div class="legend"><span><i class="seg-compute"></i>compute</span><span><i class="seg-exposed"></i>exposed communication</span><span><i class="seg-hidden"></i>communication hidden behind compute</span></div>`;
}

function renderAssumptions(doc) {
  const notes = doc.options.map((o) => `<h4>${esc(techName(o.technology))}</h4><ul class="small">${o.performance.notes.concat(o.cost.assumptions).map((n) => `<li>${esc(n)}</li>`).join("")}</ul>`).join("");
  $("assumptions").innerHTML = `<ul class="small">${doc.assumptions.map((a) => `<li>${esc(a)}</li>`).join("")}</ul>${notes}`;
}

// ---------- downloads ----------
function saveAs(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url; a.download = name; document.body.appendChild(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
async function download(kind) {
  const base = (state.spec.name || "cluster").replace(/[^A-Za-z0-9_.-]/g, "_");
  try {
    if (kind === "spec") saveAs(`${base}.yaml`, $("yaml").value, "application/yaml");
    else if (kind === "json") saveAs(`${base}-compare.json`, JSON.stringify(state.answer, null, 2), "application/json");
    else {
      const text = await api(`/api/report?format=${kind}`, { spec: state.spec }, { text: true });
      saveAs(`${base}-compare.${kind}`, text, kind === "html" ? "text/html" : "text/markdown");
    }
  } catch (error) { showError("compare-error", error); }
}

// ---------- files (lint, check-bench) ----------
async function readFiles(list) {
  return Promise.all([...list].map(async (f) => ({ name: f.name, text: await f.text() })));
}
function bindDrop(zoneId, inputId, onFiles) {
  const zone = $(zoneId);
  zone.addEventListener("dragover", (ev) => { ev.preventDefault(); zone.classList.add("over"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", async (ev) => { ev.preventDefault(); zone.classList.remove("over"); onFiles(await readFiles(ev.dataTransfer.files)); });
  $(inputId).addEventListener("change", async (ev) => { onFiles(await readFiles(ev.target.files)); ev.target.value = ""; });
}

async function runLint(files) {
  state.lintFiles = files;
  $("lint-files").textContent = files.map((f) => `${f.name} (${num(f.text.length, 0)} B)`).join(" · ");
  $("lint-result").innerHTML = "";
  try {
    const doc = await api("/api/lint", { files });
    showError("lint-error", null);
    const s = doc.summary, intent = doc.intent;
    const verdict = s.error ? `<b class="sev sev-error">${s.error} error${s.error > 1 ? "s" : ""}</b>` : `<b class="sev st-ok">no errors</b>`;
    const rows = doc.findings.map((f) => `<tr><td>${esc(f.rule)}</td><td><span class="sev sev-${esc(f.severity)}">${esc(f.severity)}</span></td><td>${esc(f.device)}</td>
      <td>${esc(f.message)}<div class="small muted">${esc(f.why)}</div></td><td>${esc(f.fix)}</td><td class="small">${esc(f.file)}${f.line ? ":" + f.line : ""}</td></tr>`).join("");
    $("lint-result").innerHTML = `<div class="card" id="lint-verdict"><p class="verdict-line">${verdict} · ${s.warning} warnings · ${s.info} notes over ${doc.devices.length} device${doc.devices.length > 1 ? "s" : ""}</p>
      <div class="small muted">${doc.devices.map((d) => `${esc(d.name)} (${esc(d.format)}, ${d.ports} port${d.ports === 1 ? "" : "s"})`).join(" · ")}<br>
      lossless priorities ${esc(JSON.stringify(intent.lossless_priorities))}, RoCE DSCP ${esc(intent.roce_dscp ?? "unknown")}, CNP DSCP ${esc(intent.cnp_dscp)}, RoCE MTU ${esc(intent.roce_mtu_bytes)}</div>
      ${rows ? `<table class="t" id="lint-findings"><tr><th>rule</th><th>severity</th><th>device</th><th>finding</th><th>fix</th><th>where</th></tr>${rows}</table>` : "<p>Every rule passes: the lossless settings agree across these devices.</p>"}</div>`;
  } catch (error) { showError("lint-error", error); }
}

const QUANTITY = { busbw_GBps: ["busbw (GB/s)", gbps], bw_gbps: ["bandwidth (Gb/s)", gbps], latency_us: ["latency", timeUs] };
const STATUS_COLOR = { ok: "#1f8f4e", fast: "#2b6cb0", slow: "#b7791f", fail: "#c53030", unchecked: "#888" };

async function runBench(files) {
  state.benchFiles = files;
  $("bench-files").textContent = files.map((f) => `${f.name} (${num(f.text.length, 0)} B)`).join(" · ");
  $("bench-result").innerHTML = "";
  const body = { files };
  if ($("bench-with-spec").checked) body.spec = state.spec;
  try {
    const doc = await api("/api/check-bench", body);
    showError("bench-error", null);
    const groups = new Map();
    for (const m of doc.measurements) {
      const q = m.busbw_GBps != null ? "busbw_GBps" : m.bw_gbps != null ? "bw_gbps" : "latency_us";
      const key = `${m.file}|${m.run}|${m.test}|${q}`;
      if (!groups.has(key)) groups.set(key, { file: m.file, run: m.run, test: m.test, q, rows: [] });
      groups.get(key).rows.push(m);
    }
    const counts = doc.summary.status || {};
    const verdict = Object.keys(counts).length ? Object.entries(counts).map(([k, v]) => `<span class="sev st-${esc(k)}">${v} ${esc(k)}</span>`).join(" ") : `<span class="muted">read only (no spec to judge against)</span>`;
    const findings = doc.findings.map((f) => `<li><span class="sev sev-${esc(f.severity)}">${esc(f.severity)}</span> ${esc(f.message)}</li>`).join("");
    const panels = [...groups.values()].map((g) => {
      const [label, fmt] = QUANTITY[g.q];
      const measured = { name: "measured", color: "#152033", markers: true, points: g.rows.map((m) => ({ x: m.size_bytes, y: m[g.q], color: STATUS_COLOR[m.status] || "#152033", note: m.status ? `${m.status}${m.ratio ? ", " + (100 * m.ratio).toFixed(0) + " % of expected" : ""}` : "" })) };
      const series = [measured];
      if (g.rows.some((m) => m.expected)) {
        const tech = g.rows.find((m) => m.technology)?.technology;
        series.push({ name: `expected (${techName(tech)}) ± band`, color: TECH_COLORS[tech] || "#2f5bd3", dash: true,
          points: g.rows.filter((m) => m.expected).map((m) => ({ x: m.size_bytes, y: m.expected.value, lo: m.expected.low, hi: m.expected.high })) });
      }
      const table = g.rows.map((m) => `<tr><td class="n">${size(m.size_bytes)}</td><td class="n">${fmt(m[g.q])}</td><td class="n">${m.expected ? fmt(m.expected.value) : "–"}</td><td class="n">${m.ratio != null ? (100 * m.ratio).toFixed(0) + " %" : "–"}</td><td>${m.status ? `<span class="sev st-${esc(m.status)}">${esc(m.status)}</span>` : ""}</td></tr>`).join("");
      return `<div class="card bench-panel"><h3>${esc(g.test)} — ${esc(g.file)} run ${g.run}</h3><div class="plots"><div class="plot">${logPlot(series, { xlabel: "message size (bytes)", ylabel: label, yfmt: fmt })}</div>
        <div><table class="t"><tr><th class="n">size</th><th class="n">measured</th><th class="n">expected</th><th class="n">ratio</th><th>status</th></tr>${table}</table></div></div></div>`;
    }).join("");
    const runs = doc.files.flatMap((f) => f.runs.map((r) => `<li>${esc(f.path)}: ${esc(r.tool)} ${esc(r.test)}${r.ranks ? `, ${r.ranks} GPUs` : ""}${r.nodes ? ` on ${r.nodes} nodes` : ""}${r.technology_hint ? `, ${esc(r.technology_hint)} (${esc(r.hint_reason)})` : ""}</li>`)).join("");
    $("bench-result").innerHTML = `<div class="card" id="bench-verdict"><p class="verdict-line">${doc.summary.measurements} measurements: ${verdict}</p>
      <ul class="small">${runs}</ul>${findings ? `<h4>Diagnosis</h4><ul id="bench-findings">${findings}</ul>` : "<p>No problem found in these logs.</p>"}</div>${panels}`;
  } catch (error) { showError("bench-error", error); }
}

// ---------- simulation jobs ----------
async function startSimulation() {
  const body = {
    spec: state.spec, backend: $("s-backend").value, pattern: $("s-pattern").value,
    seeds: Number($("s-seeds").value), jobs: Number($("s-jobs").value), placement: $("s-placement").value,
    fail_links: Number($("s-fail").value),
  };
  if ($("s-size").value) body.size_bytes = Number($("s-size").value);
  if ($("s-routing").value) body.routing = $("s-routing").value;
  try {
    const job = await api("/api/simulate", body);
    showError("sim-error", null);
    state.shownJob = job.id;
    watch(job.id);
    await refreshJobs();
  } catch (error) { showError("sim-error", error); }
}

async function startSweep() {
  const vary = [$("w-vary").value, $("w-vary2").value].map((v) => v.trim()).filter(Boolean);
  try {
    const job = await api("/api/sweep", { spec: state.spec, vary });
    showError("sim-error", null);
    state.shownJob = job.id;
    watch(job.id);
    await refreshJobs();
  } catch (error) { showError("sim-error", error); }
}

function renderSweepResult(job) {
  const { keys, rows } = job.result;
  const key = keys[0];
  const numeric = rows.every((r) => typeof r[key] === "number" && r[key] > 0);
  const techs = [...new Set(rows.map((r) => r.technology))];
  const series = (field) => techs.map((t) => ({
    name: techName(t), color: TECH_COLORS[t] || "#888", markers: true,
    points: rows.filter((r) => r.technology === t && !r.error && r[field] > 0).map((r) => ({ x: r[key], y: r[field] })),
  }));
  const plots = numeric ? `<div class="plots"><div class="plot">${logPlot(series("tco_with_gpu_idle_usd"), { xlabel: key, ylabel: "TCO + idle GPU time", yfmt: money, xfmt: num, xstep: 1 })}</div>
    <div class="plot">${logPlot(series("step_s"), { xlabel: key, ylabel: "training step (s)", yfmt: (v) => String(Number(v.toPrecision(2))), xfmt: num, xstep: 1 })}</div></div>` : "";
  const table = rows.map((r) => `<tr>${keys.map((k) => `<td class="n">${esc(r[k])}</td>`).join("")}<td>${esc(techName(r.technology))}</td>
    <td class="n">${money(r.capex_usd)}</td><td class="n">${money(r.tco_with_gpu_idle_usd)}</td><td class="n">${r.step_s ? r.step_s.toFixed(2) : "–"}</td><td>${r.recommended ? "✔" : ""}</td><td class="small">${esc(r.error)}</td></tr>`).join("");
  const pareto = paretoPlot(job.result.options || [], techs);
  const map = job.result.map ? heatMap(job.result.map) : "";
  $("job-result").innerHTML = `<div class="card" id="sweep-result"><h3>${esc(job.label)}</h3>${plots}
    <div class="plots"><div class="plot" id="sweep-pareto"><h4>TCO against step time, with the Pareto front${new Set((job.result.options || []).map((o) => o.group)).size > 1 ? " per cluster size" : ""}</h4>${pareto}</div>
    ${map ? `<div class="plot" id="sweep-map"><h4>Recommended technology</h4>${map}</div>` : ""}</div>
    <table class="t"><tr>${keys.map((k) => `<th class="n">${esc(k)}</th>`).join("")}<th>technology</th><th class="n">capex</th><th class="n">TCO + idle</th><th class="n">step s</th><th>recommended</th><th></th></tr>${table}</table></div>
    ${sweepReportCard(job.result)}`;
}

// The figures and the crossover table exactly as `fabricplan sweep-report` draws them: one line
// per technology and setting of the other keys, crossovers dotted, seed bands (SVG made by the
// server's report module; its text is drawn as paths and its comments escaped).
function sweepReportCard(result) {
  const figures = (result.figures || []).map((f, i) => `<figure class="report-figure" data-figure="${i}"><figcaption>${esc(f.title)}</figcaption>${f.svg}</figure>`).join("");
  const cross = result.crossovers || { header: [], rows: [] };
  const crossTable = cross.rows.length
    ? `<h4>Crossovers and changes of the recommendation</h4><table class="t" id="sweep-crossovers"><tr>${cross.header.map((h) => `<th>${esc(h)}</th>`).join("")}</tr>${cross.rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join("")}</tr>`).join("")}</table>`
    : "";
  if (!figures && !crossTable) return "";
  return `<div class="card" id="sweep-report"><h3>As <code>fabricplan sweep-report</code> draws them</h3>${crossTable}${figures}</div>`;
}

// The sweep-report's Pareto plot: every point and technology (mean over seeds), and the options
// no other of the same cluster size beats on both TCO and step time, joined per size.
function paretoPlot(options, techs) {
  const label = (o) => Object.entries(o.settings).map(([k, v]) => `${k}=${v}`).join(", ");
  const series = techs.map((t) => ({
    name: techName(t), color: TECH_COLORS[t] || "#888", markersOnly: true,
    points: options.filter((o) => o.technology === t).map((o) => ({ x: o.step_s, y: o.tco_usd, note: label(o) })),
  }));
  const groups = [...new Set(options.map((o) => o.group))];
  groups.forEach((g, i) => {
    const front = options.filter((o) => o.front && o.group === g).sort((a, b) => a.tco_usd - b.tco_usd);
    series.push({ name: "Pareto front", color: "#101828", legend: i === 0, points: front.map((o) => ({ x: o.step_s, y: o.tco_usd })) });
  });
  return logPlot(series, { xlabel: "training step (s)", ylabel: "TCO", yfmt: money, xfmt: (v) => String(Number(v.toPrecision(2))), xstep: 1 });
}

// The recommendation map over the first two varied keys: the technology recommended most often
// in each cell (its share when not always), as the sweep-report's heat map.
function heatMap(m) {
  const cw = Math.max(56, Math.min(110, 460 / Math.max(m.col_values.length, 1))), ch = 30, L = 96, T = 8, B = 40;
  const W = L + cw * m.col_values.length + 8, H = T + ch * m.row_values.length + B;
  let body = "";
  m.cells.forEach((line, i) => line.forEach((cell, j) => {
    const x = L + j * cw, y = T + i * ch;
    const fill = cell.technology ? (TECH_COLORS[cell.technology] || "#888") : "#e9edf3";
    const text = cell.technology ? `${techName(cell.technology)}${cell.share < 1 ? ` ${(100 * cell.share).toFixed(0)}%` : ""}` : "–";
    body += `<rect class="cell" data-technology="${esc(cell.technology)}" x="${x}" y="${y}" width="${cw - 2}" height="${ch - 2}" fill="${fill}" fill-opacity="${cell.technology ? 0.35 + 0.65 * cell.share : 1}"><title>${esc(m.row_key)}=${esc(m.row_values[i])}, ${esc(m.col_key)}=${esc(m.col_values[j])}: ${esc(text)}</title></rect>`;
    body += `<text x="${x + cw / 2 - 1}" y="${y + ch / 2 + 3}" text-anchor="middle" fill="${cell.technology ? "#fff" : "#667085"}">${esc(text)}</text>`;
  }));
  m.col_values.forEach((v, j) => { body += `<text x="${L + j * cw + cw / 2}" y="${T + ch * m.row_values.length + 14}" text-anchor="middle">${esc(v)}</text>`; });
  m.row_values.forEach((v, i) => { body += `<text x="${L - 6}" y="${T + i * ch + ch / 2 + 3}" text-anchor="end">${esc(v)}</text>`; });
  body += `<text x="${L + (W - L) / 2}" y="${H - 6}" text-anchor="middle">${esc(m.col_key)}</text>`;
  body += `<text transform="translate(11 ${T + ch * m.row_values.length / 2}) rotate(-90)" text-anchor="middle">${esc(m.row_key)}</text>`;
  return svgEl(W, H, body);
}

function watch(id) {
  if (state.watched.has(id)) return;
  state.watched.add(id);
  const tick = async () => {
    try {
      const job = await api(`/api/jobs/${id}`);
      renderJobRow(job);
      if (["done", "failed", "cancelled"].includes(job.status)) {
        state.watched.delete(id);
        state.jobStatus[id] = job.status;
        const shown = state.jobStatus[state.shownJob];
        if (job.status === "done" && (state.shownJob === id || shown !== "done")) {
          state.shownJob = id;
          renderJobResult(job);
        }
        return;
      }
    } catch (_) { state.watched.delete(id); return; }
    setTimeout(tick, POLL_MS);
  };
  tick();
}

async function refreshJobs() {
  try {
    const { jobs } = await api("/api/jobs");
    $("jobs").innerHTML = jobs.length ? `<div class="card"><h3>Jobs on this server</h3><div id="job-rows"></div></div>` : "";
    for (const job of jobs.slice().reverse()) {
      renderJobRow(job);
      if (!["done", "failed", "cancelled"].includes(job.status)) watch(job.id);
    }
    if (!state.shownJob && jobs.length) {
      const done = jobs.find((j) => j.status === "done");
      if (done) { state.shownJob = done.id; renderJobResult(await api(`/api/jobs/${done.id}`)); }
    }
  } catch (_) { /* the next action shows the error */ }
}

function renderJobRow(job) {
  state.jobStatus[job.id] = job.status;
  let rows = $("job-rows");
  if (!rows) { $("jobs").innerHTML = `<div class="card"><h3>Jobs on this server</h3><div id="job-rows"></div></div>`; rows = $("job-rows"); }
  let row = document.querySelector(`[data-job="${job.id}"]`);
  if (!row) { row = document.createElement("div"); row.className = "job"; row.dataset.job = job.id; rows.prepend(row); }
  const open = ["queued", "running"].includes(job.status);
  row.dataset.status = job.status;
  row.innerHTML = `<div><b>${esc(job.label)}</b><div class="small muted">${esc(job.error || job.stage)}</div></div>
    <div class="progress" title="${(100 * job.progress).toFixed(0)} %"><span style="width:${(100 * job.progress).toFixed(1)}%"></span></div>
    <div class="status status-${esc(job.status)}">${esc(job.status)} ${job.status === "running" ? (100 * job.progress).toFixed(0) + " %" : ""}</div>
    <div>${open ? `<button class="small" data-cancel="${job.id}">Cancel</button>` : job.status === "done" ? `<button class="small" data-show="${job.id}">Show</button>` : ""}</div>`;
}

function renderJobResult(job) {
  if (job.status !== "done" || !job.result) return;
  if (job.kind === "sweep") { renderSweepResult(job); return; }
  const res = job.result.results;
  $("job-result").innerHTML = `<div class="card" id="sim-result"><h3>${esc(job.label)}</h3><div class="options">${res.map((r) => {
    const fct = r.fct_us || {};
    const tiers = (r.tiers || []).map((t) => `<tr><td>${esc(t.tier)}</td><td class="n">${(100 * t.mean_utilisation).toFixed(1)} %</td><td class="n">${(100 * t.max_utilisation).toFixed(1)} %</td><td class="n">${num(t.paused_us, 1)}</td></tr>`).join("");
    const busiest = (r.busiest_links || []).slice(0, 3).map((b) => `<li>${esc(b.name)} (${esc(b.tier)}) ${(100 * b.utilisation).toFixed(1)} %</li>`).join("");
    return `<article class="option" style="--c:${TECH_COLORS[r.technology] || "#888"}"><div class="title"><h3>${esc(techName(r.technology))}</h3><span class="muted small">${esc(r.backend)}</span></div>
      <div class="kpis"><div class="kpi"><div class="v">${timeUs(r.completion_us)}</div><div class="k">completion</div></div>
      <div class="kpi"><div class="v">${fct.p50 != null ? timeUs(fct.p50) : "–"}</div><div class="k">FCT p50</div></div>
      <div class="kpi"><div class="v">${fct.p99 != null ? timeUs(fct.p99) : "–"}</div><div class="k">FCT p99</div></div></div>
      <div class="small muted">routing ${esc(r.routing)}, flow control ${esc(r.link_flow_control)}, congestion control ${esc(r.congestion_control)}; ${num(r.flows, 0)} flows</div>
      <table class="t"><tr><th>tier</th><th class="n">mean util.</th><th class="n">max util.</th><th class="n">paused link-µs</th></tr>${tiers}</table>
      ${busiest ? `<h4>Busiest links</h4><ul class="small">${busiest}</ul>` : ""}</article>`;
  }).join("")}</div></div>`;
}

// ---------- start ----------
function bindTabs() {
  document.querySelectorAll(".tabs button").forEach((b) => b.addEventListener("click", () => {
    document.querySelectorAll(".tabs button").forEach((x) => x.classList.toggle("active", x === b));
    for (const t of ["compare", "lint", "bench", "simulate"]) $(`tab-${t}`).hidden = t !== b.dataset.tab;
    if (b.dataset.tab === "simulate") refreshJobs();
  }));
}

async function start() {
  // the token, if the page was opened with one, now travels in a cookie: keep it out of history
  if (new URLSearchParams(location.search).has("token")) history.replaceState(null, "", "/");
  bindTabs();
  bindForm();
  document.querySelectorAll("[data-download]").forEach((b) => b.addEventListener("click", () => download(b.dataset.download)));
  $("p-collective").addEventListener("change", () => state.answer && renderPlots(state.answer));
  bindDrop("drop-lint", "file-lint", runLint);
  bindDrop("drop-bench", "file-bench", runBench);
  $("bench-with-spec").addEventListener("change", () => state.benchFiles.length && runBench(state.benchFiles));
  $("s-start").addEventListener("click", startSimulation);
  $("w-start").addEventListener("click", startSweep);
  $("jobs").addEventListener("click", async (ev) => {
    const cancel = ev.target.dataset.cancel, show = ev.target.dataset.show;
    if (cancel) { try { renderJobRow(await api(`/api/jobs/${cancel}/cancel`, {})); } catch (error) { showError("sim-error", error); } }
    if (show) { state.shownJob = show; renderJobResult(await api(`/api/jobs/${show}`)); }
  });
  try {
    const saved = localStorage.getItem("fabricplan.spec");
    if (saved) state.spec = JSON.parse(saved);
  } catch (_) { /* none saved */ }
  try {
    state.catalog = await api("/api/catalog");
    for (const p of state.catalog.prices) state.prices[p.item] = p.price_usd;
    $("f-gpu").innerHTML = state.catalog.items.filter((i) => i.kind === "node").map((i) => `<option value="${esc(i.id)}">${esc(i.id)} — ${esc(i.name)}</option>`).join("");
  } catch (error) { showError("compare-error", error); }
  specChanged();
  refreshJobs();
}

document.addEventListener("DOMContentLoaded", start);
