// vitals views: the shared core. The MCP Apps bridge (JSON-RPC 2.0 over postMessage, SEP-1865),
// theming, sizing, and the SVG drawing every view uses. No library, no network: everything a view
// shows comes from the tool's result or from this server's tools called through the host.
"use strict";
const V = (() => {
  const host = window.parent;
  let nextId = 1;
  const waiting = new Map();
  const state = { context: {}, input: null, renderers: [] };

  function send(msg) { host.postMessage(Object.assign({ jsonrpc: "2.0" }, msg), "*"); }
  function request(method, params) {
    const id = nextId++;
    send({ id, method, params });
    return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
  }
  function notify(method, params) { send({ method, params }); }

  /** A tool of this server, through the host; the answer's structuredContent, or an Error with its text. */
  async function callTool(name, args) {
    const r = await request("tools/call", { name, arguments: args });
    const text = (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
    if (r.isError) throw new Error(text || name + " failed");
    return r.structuredContent || JSON.parse(text);
  }

  function applyContext(ctx) {
    Object.assign(state.context, ctx);
    const root = document.documentElement;
    if (state.context.theme) root.dataset.theme = state.context.theme;
    const vars = (state.context.styles && state.context.styles.variables) || {};
    for (const [k, v] of Object.entries(vars)) if (v) root.style.setProperty(k, v);
    const dims = state.context.containerDimensions || {};
    if ("height" in dims) root.style.height = "100vh"; else if (dims.maxHeight) root.style.maxHeight = dims.maxHeight + "px";
    if ("width" in dims) root.style.width = "100vw"; else if (dims.maxWidth) root.style.maxWidth = dims.maxWidth + "px";
  }

  function toolName() {
    const t = state.context.toolInfo && state.context.toolInfo.tool;
    return t ? t.name : null;
  }

  function onResult(result) {
    const main = document.getElementById("view");
    main.textContent = "";
    if (result.isError) {
      const text = (result.content || []).map((c) => c.text || "").join("\n");
      main.append(el("p", { class: "cut" }, "The tool answered with an error: " + text));
      return;
    }
    const data = result.structuredContent || tryParse(result.content);
    const r = state.renderers.find((x) => x.match(toolName(), data));
    if (!r) { main.append(el("p", { class: "note" }, "Nothing to draw for this answer; the text answer is complete.")); return; }
    Promise.resolve(r.render(main, data, state.input || {})).catch((e) => main.append(el("p", { class: "cut" }, String(e.message || e))))
      .finally(() => { main.dataset.drawn = "1"; });
  }

  function tryParse(content) {
    try { return JSON.parse((content || []).map((c) => c.text || "").join("")); } catch (_) { return null; }
  }

  window.addEventListener("message", (event) => {
    if (event.source !== host) return;
    const m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.id !== undefined && !m.method) {
      const w = waiting.get(m.id);
      if (!w) return;
      waiting.delete(m.id);
      if (m.error) w.reject(new Error(m.error.message || "error")); else w.resolve(m.result);
      return;
    }
    switch (m.method) {
      case "ui/notifications/tool-input": state.input = (m.params && m.params.arguments) || {}; break;
      case "ui/notifications/tool-result": onResult(m.params || {}); break;
      case "ui/notifications/host-context-changed": applyContext(m.params || {}); break;
      case "ui/notifications/tool-cancelled":
        document.getElementById("view").replaceChildren(el("p", { class: "note" }, "The call was cancelled: nothing to draw."));
        break;
      case "ui/resource-teardown": send({ id: m.id, result: {} }); break;
      case "ping": send({ id: m.id, result: {} }); break;
      default: if (m.id !== undefined) send({ id: m.id, error: { code: -32601, message: "unknown method " + m.method } });
    }
  });

  async function start() {
    const r = await request("ui/initialize", {
      appCapabilities: { availableDisplayModes: ["inline"] },
      appInfo: { name: "vitals", version: "1" },
      protocolVersion: "2026-01-26",
    });
    applyContext((r && r.hostContext) || {});
    notify("ui/notifications/initialized", {});
    let last = "";
    new ResizeObserver(() => {
      const size = { width: Math.ceil(document.documentElement.scrollWidth), height: Math.ceil(document.documentElement.scrollHeight) };
      const key = size.width + "x" + size.height;
      if (key !== last) { last = key; notify("ui/notifications/size-changed", size); }
    }).observe(document.body);
  }

  // ---- DOM and SVG
  const SVG = "http://www.w3.org/2000/svg";
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, v);
    e.append(...kids.flat().filter((k) => k !== null && k !== undefined));
    return e;
  }
  function sv(tag, attrs, ...kids) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, v);
    e.append(...kids.flat().filter((k) => k !== null && k !== undefined));
    return e;
  }

  // ---- time, in the person's own zone when the host gives it
  function clock(ms) {
    return new Date(ms).toLocaleTimeString(state.context.locale || undefined,
      { hour: "2-digit", minute: "2-digit", timeZone: state.context.timeZone || undefined });
  }
  function day(ms) {
    return new Date(ms).toLocaleDateString(state.context.locale || undefined,
      { month: "short", day: "numeric", timeZone: state.context.timeZone || undefined });
  }
  function hm(min) { const m = Math.round(min); return Math.floor(m / 60) + " h " + String(m % 60).padStart(2, "0"); }

  /** Banners for what the answer says of itself: sample data, and a cut answer (where it stops). */
  function banners(notices, synthetic) {
    const out = [];
    if (synthetic || (notices && notices.synthetic)) {
      out.push(el("p", { class: "sample", "data-sample": "1" }, "SAMPLE DATA — built-in synthetic data, not your own. Connect an account to see yours."));
    }
    const t = notices && notices.truncated;
    if (t) {
      const at = t.continue_from ? " It stops before " + t.continue_from + "." : "";
      out.push(el("p", { class: "cut", "data-cut": t.continue_from || "1" }, "INCOMPLETE: this answer was cut." + at + (t.reason ? " " + t.reason : "")));
    }
    return out;
  }

  /**
   * A line chart of one or more series: every point given is drawn (a polyline vertex each).
   * `series`: [{name, unit, points: [[ms, value], ...]}]; `opts`: {height, onZoom(from, to), band: [lo, hi]}.
   */
  function lineChart(series, opts) {
    opts = opts || {};
    const W = 640, H = opts.height || 160, L = 36, R = 8, T = 8, B = 18;
    const all = series.flatMap((s) => s.points);
    if (!all.length) return el("p", { class: "note" }, "No samples in this span.");
    const lo = (k) => all.reduce((m, p) => Math.min(m, p[k]), Infinity), hi = (k) => all.reduce((m, p) => Math.max(m, p[k]), -Infinity);
    let x0 = opts.from ?? lo(0), x1 = opts.to ?? hi(0);
    if (x1 <= x0) x1 = x0 + 60000;
    let y0 = lo(1), y1 = hi(1);
    if (opts.band) { y0 = Math.min(y0, opts.band[0]); y1 = Math.max(y1, opts.band[1]); }
    const pad = (y1 - y0) * 0.08 || 1; y0 -= pad; y1 += pad;
    const X = (t) => L + ((t - x0) / (x1 - x0)) * (W - L - R);
    const Y = (v) => T + (1 - (v - y0) / (y1 - y0)) * (H - T - B);
    const svg = sv("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": series.map((s) => s.name).join(", ") });
    for (let i = 0; i <= 4; i++) {
      const v = y0 + ((y1 - y0) * i) / 4;
      svg.append(sv("line", { class: "grid", x1: L, x2: W - R, y1: Y(v), y2: Y(v) }), sv("text", { x: 2, y: Y(v) + 3 }, v.toFixed(v < 10 ? 1 : 0)));
    }
    const span = x1 - x0, label = span > 2 * 86400000 ? day : clock;
    for (let i = 0; i <= 5; i++) {
      const t = x0 + (span * i) / 5;
      svg.append(sv("text", { x: X(t), y: H - 4, "text-anchor": i === 0 ? "start" : i === 5 ? "end" : "middle" }, label(t)));
    }
    if (opts.band) svg.append(sv("rect", { class: "band", "data-band": opts.band.join(","), x: L, width: W - L - R, y: Y(opts.band[1]), height: Y(opts.band[0]) - Y(opts.band[1]) }));
    series.forEach((s, i) => {
      const pts = s.points.map((p) => X(p[0]).toFixed(1) + "," + Y(p[1]).toFixed(1)).join(" ");
      svg.append(sv("polyline", { class: "line", "data-series": s.name, "data-points": s.points.length, points: pts, stroke: `var(--line-${(i % 3) + 1})` }));
    });
    if (opts.onZoom) zoomable(svg, (px) => x0 + ((px - L) / (W - L - R)) * span, W, H, opts.onZoom);
    return svg;
  }

  /** Drag across a chart to zoom into that span: `onZoom(fromMs, toMs)`. */
  function zoomable(svg, toTime, W, H, onZoom) {
    let startX = null, rect = null;
    const px = (e) => { const b = svg.getBoundingClientRect(); return ((e.clientX - b.left) / b.width) * W; };
    svg.addEventListener("pointerdown", (e) => { startX = px(e); rect = sv("rect", { class: "sel", x: startX, y: 0, width: 0, height: H }); svg.append(rect); });
    svg.addEventListener("pointermove", (e) => { if (startX === null) return; const x = px(e); rect.setAttribute("x", Math.min(x, startX)); rect.setAttribute("width", Math.abs(x - startX)); });
    svg.addEventListener("pointerup", (e) => {
      if (startX === null) return;
      const a = toTime(Math.min(startX, px(e))), b = toTime(Math.max(startX, px(e)));
      startX = null; rect.remove();
      if (b - a > 60000) onZoom(Math.round(a), Math.round(b));
    });
  }

  function register(r) { state.renderers.push(r); }

  start().catch((e) => { document.getElementById("view").replaceChildren(el("p", { class: "cut" }, "The host did not start the view: " + e.message)); });
  return { callTool, el, sv, clock, day, hm, banners, lineChart, register, state };
})();
