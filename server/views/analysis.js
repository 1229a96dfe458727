// vitals_compare, vitals_trend, vitals_relate (their reports are flat: result and provenance
// fields side by side): the days the verdict was computed from (asked of
// the server as the analyses read them), with what the verdict came from drawn: the noise band
// around period A's mean, the fitted line, or the paired day-to-day changes; the verdict in words.
const Analysis = (() => {
  const { el, sv, lineChart } = V;
  const ms = (day) => Date.parse(day + "T12:00:00Z");
  const points = (a) => (a.days || []).map(([d, v]) => [ms(d), v]);
  const verdict = (d) => el("p", { class: "verdict", "data-verdict": d.verdict }, el("b", {}, d.verdict.replace(/_/g, " ")), ": " + d.reading);
  // In the zone the report was read in, when `tz` named one.
  const days = (metric, start, end, tz) => V.callTool("vitals_view_data", tz ? { metric, start, end, tz } : { metric, start, end });

  async function compare(root, d) {
    const r = d, first = d.a.start < d.b.start ? d.a : d.b, last = d.a.start < d.b.start ? d.b : d.a;
    const a = await days(d.metric, first.start, last.end, d.tz);
    root.append(...V.banners(null, a.synthetic || d.synthetic));
    const all = points(a);
    const inside = (p, s) => p[0] >= ms(s.start) && p[0] <= ms(s.end);
    const series = [{ name: "A " + d.a.start + "–" + d.a.end, points: all.filter((p) => inside(p, d.a)) },
      { name: "B " + d.b.start + "–" + d.b.end, points: all.filter((p) => inside(p, d.b)) }];
    const opts = { height: 170 };
    if (typeof r.mean_a === "number" && typeof r.mean_b === "number") {
      series.push({ name: "mean A", points: [[ms(d.a.start), r.mean_a], [ms(d.a.end), r.mean_a]] });
      series.push({ name: "mean B", points: [[ms(d.b.start), r.mean_b], [ms(d.b.end), r.mean_b]] });
      // Outside this band around A's mean is outside the noise: the verdict's own rule, drawn.
      if (typeof r.noise_band === "number") opts.band = [r.mean_a - r.noise_band, r.mean_a + r.noise_band];
    }
    root.append(lineChart(series, opts));
    if (opts.band) root.append(el("p", { class: "note" }, "Shaded: period A's mean ± " + r.noise_band.toFixed(2) + ", the noise band; B's mean outside it is outside the noise."));
  }

  async function trend(root, d) {
    const r = d, a = await days(d.metric, d.range.start, d.range.end, d.tz);
    root.append(...V.banners(null, a.synthetic || d.synthetic));
    const series = [{ name: d.metric, points: points(a) }];
    if (typeof r.fitted_start === "number") series.push({ name: "fitted", points: [[ms(d.range.start), r.fitted_start], [ms(d.range.end), r.fitted_end]] });
    root.append(lineChart(series, { height: 170 }));
    if (r.interval) root.append(el("p", { class: "note", "data-interval": r.interval.join(",") }, "Slope per 30 days: " + r.slope_per_30_days.toFixed(2) + " (95 % interval " + r.interval.map((x) => x.toFixed(2)).join(" to ") + ")."));
  }

  async function relate(root, d) {
    const [x, y] = await Promise.all([days(d.x, d.range.start, d.range.end, d.tz), days(d.y, d.range.start, d.range.end, d.tz)]);
    root.append(...V.banners(null, x.synthetic || y.synthetic || d.synthetic));
    const map = (a) => new Map(a.days);
    const X = map(x), Y = map(y), step = (day, k) => new Date(ms(day) + k * 86400000).toISOString().slice(0, 10);
    const pairs = [];
    for (const [day, v] of X) {
      const prev = X.get(step(day, -1)), yd = step(day, d.lag), yv = Y.get(yd), yp = Y.get(step(yd, -1));
      if (prev !== undefined && yv !== undefined && yp !== undefined) pairs.push([v - prev, yv - yp]);
    }
    const W = 320, H = 220, pad = 24;
    const ext = (i) => { const v = pairs.map((p) => Math.abs(p[i])); return Math.max(1e-9, ...v); };
    const ex = ext(0), ey = ext(1);
    const svg = sv("svg", { viewBox: `0 0 ${W} ${H}`, style: "max-width: 360px", "data-pairs": pairs.length });
    svg.append(sv("line", { class: "grid", x1: W / 2, x2: W / 2, y1: pad, y2: H - pad }), sv("line", { class: "grid", x1: pad, x2: W - pad, y1: H / 2, y2: H / 2 }));
    for (const [a, b] of pairs) svg.append(sv("circle", { cx: W / 2 + (a / ex) * (W / 2 - pad), cy: H / 2 - (b / ey) * (H / 2 - pad), r: 2.4, fill: "var(--line-3)", opacity: 0.7 }));
    svg.append(sv("text", { x: W - pad - 80, y: H / 2 - 4 }, "change in x"), sv("text", { x: W / 2 + 4, y: pad - 6 }, "change in y"));
    root.append(svg, el("p", { class: "note" }, pairs.length + " pairs of raw day-to-day changes (y " + d.lag + " day(s) after x). The verdict's method used " +
      d.pairs + " pairs with weekday means removed first: this cloud shows the data, not the computation."));
  }

  V.register({
    match: (tool, d) => ["vitals_compare", "vitals_trend", "vitals_relate"].includes(tool) || (d && d.verdict && d.reading && d.daily_rule),
    render(root, d) {
      root.append(el("h2", {}, d.metric || d.x + " and " + d.y), verdict(d));
      if (d.a && d.b) return compare(root, d);
      if (d.x && d.y) return relate(root, d);
      return trend(root, d);
    },
  });
  return {};
})();
