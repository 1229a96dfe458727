// A night: the hypnogram, then heart rate and HRV through it. Nights of two devices are drawn one
// above the other, each with its own numbers; nothing is averaged across devices.
const Night = (() => {
  const { el, sv, clock, hm, lineChart } = V;
  const ROWS = { awake: 0, rem: 1, light: 2, deep: 3, unknown: 4 };
  const NAMES = { deep: "Deep", light: "Light", rem: "REM", awake: "Awake", unknown: "Not measured" };

  function hypnogram(n) {
    const W = 640, H = 90, L = 36, R = 8;
    const runs = n.stages;
    const svg = sv("svg", { viewBox: `0 0 ${W} ${H + 16}`, role: "img", "aria-label": "hypnogram", class: "hypnogram" });
    if (!runs.length) return el("p", { class: "note" }, "This night has no hypnogram.");
    const x0 = runs[0][0], x1 = runs[runs.length - 1][1];
    const X = (t) => L + ((t - x0) / (x1 - x0)) * (W - L - R);
    const rowH = H / 5;
    for (const [name, row] of Object.entries(ROWS)) svg.append(sv("text", { x: 0, y: row * rowH + rowH * 0.7 }, NAMES[name].slice(0, 5)));
    for (const [from, to, stage] of runs) {
      svg.append(sv("rect", { class: "stage-" + stage, "data-stage": stage, "data-min": ((to - from) / 60000).toFixed(2),
        x: X(from).toFixed(2), width: Math.max(0.5, X(to) - X(from)).toFixed(2), y: ROWS[stage] * rowH + 1, height: rowH - 2 }));
    }
    for (let i = 0; i <= 4; i++) { const t = x0 + ((x1 - x0) * i) / 4; svg.append(sv("text", { x: X(t) - 14, y: H + 12 }, clock(t))); }
    return svg;
  }

  // The numbers are the provider's own totals (what the text answer says); the hypnogram is drawn
  // epoch by epoch, and where its epochs add up differently, the view says so.
  function headline(n, extra) {
    const said = n.said || {}, m = n.minutes;
    const pick = (s) => (typeof said[s] === "number" ? said[s] : m[s]);
    const asleep = pick("deep") + pick("light") + pick("rem");
    const cells = [["Asleep", hm(asleep)], ["Deep", hm(pick("deep"))], ["REM", hm(pick("rem"))], ["Light", hm(pick("light"))], ["Awake", hm(pick("awake"))]];
    const hr = n.heart_rate.map((p) => p[1]), hrv = n.hrv.map((p) => p[1]);
    if (hr.length) cells.push(["Lowest HR", Math.min(...hr) + " bpm"]);
    if (hrv.length) cells.push(["Avg HRV", Math.round(hrv.reduce((a, b) => a + b, 0) / hrv.length) + " ms"]);
    for (const [k, v] of extra || []) cells.push([k, v]);
    const box = el("div", { class: "headline" }, cells.map(([k, v]) => el("div", { "data-k": k }, k, el("b", {}, v))));
    const off = ["deep", "rem", "light"].filter((s) => typeof said[s] === "number" && Math.abs(said[s] - m[s]) >= n.epoch_s / 60);
    if (!off.length) return box;
    const words = off.map((s) => NAMES[s] + " " + hm(m[s])).join(", ");
    return el("div", {}, box, el("p", { class: "note", "data-differs": off.join(",") }, "The hypnogram's epochs add up to " + words + "; the numbers above are the provider's own totals."));
  }

  function legend() {
    return el("div", { class: "legend" }, ["deep", "light", "rem", "awake"].map((s) => el("span", {}, el("i", { class: "stage-" + s, style: `background: var(--${s})` }), NAMES[s])));
  }

  /** Draw `nights` (from vitals_view_data) under `title`; `notices`/`synthetic` as the answer says. */
  function draw(root, title, nights) {
    const box = el("section", { class: "night", "data-nights": nights.length }, el("h3", {}, title));
    if (!nights.length) { box.append(el("p", { class: "note" }, "No night with a hypnogram in this span.")); root.append(box); return; }
    for (const n of nights) {
      const w = el("div", { class: "one-night", "data-day": n.day || "" },
        el("div", { class: "note" }, (n.day ? n.day + ": " : "") + clock(Date.parse(n.start)) + (n.end ? " – " + clock(Date.parse(n.end)) : "")),
        headline(n), hypnogram(n));
      const series = [];
      if (n.heart_rate.length) series.push({ name: "heart rate (bpm)", points: n.heart_rate });
      if (n.hrv.length) series.push({ name: "HRV (ms)", points: n.hrv });
      if (series.length) w.append(el("h3", {}, series.map((s) => s.name).join(" and ")), lineChart(series, { height: 120 }));
      box.append(w);
    }
    box.append(legend());
    root.append(box);
  }

  /** The nights of `collection` over `start`..`end`, asked of the server (every epoch and sample). */
  async function fetchAndDraw(root, title, collection, start, end) {
    const a = await V.callTool("vitals_view_data", { collection, start, end });
    root.append(...V.banners(a.notices, a.synthetic));
    draw(root, title, a.nights || []);
    return a;
  }

  return { draw, fetchAndDraw, headline };
})();
