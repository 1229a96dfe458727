// vitals_daily: a row per metric with a sparkline of its days; each value's provider and field on
// hover (title), days two devices measured marked; grouped (`group`), each group's mean. Only the
// answer's own values are drawn.
V.register({
  match: (tool, d) => tool === "vitals_daily" || (d && Array.isArray(d.rows || d.groups) && Array.isArray(d.columns) && d.columns[0] && d.columns[0].sources),
  render(root, d) {
    const { el, sv } = V;
    const range = d.range || {};
    const by = d.group ? "By " + d.group : "Day by day";
    root.append(el("h2", {}, by + ", " + (range.start || "") + " to " + (range.end || "")), ...V.banners(null, d.synthetic));
    if (Array.isArray(d.groups)) {
      const t = el("table", { class: "days" });
      t.append(el("tr", {}, el("th", {}, "metric"), ...d.groups.map((g) => el("th", { title: g.start + " to " + g.end }, g.group))));
      for (const c of d.columns || []) {
        const cells = d.groups.map((g) => {
          const x = g[c.name];
          const tip = x ? `min ${x.min}, max ${x.max}, ${x.n} of ${g.days} days` : `none of ${g.days} days`;
          return el("td", { class: "num", title: tip }, x ? String(x.mean) : "—");
        });
        t.append(el("tr", {}, el("td", {}, c.name + (c.unit ? " (" + c.unit + ")" : "")), ...cells));
      }
      root.append(t, el("p", { class: "note" }, "Each group's mean of its days (hover: min, max, days with a value): a description, not a test."));
      return;
    }
    const table = el("table", { class: "days" });
    const days = d.rows || [];
    table.append(el("tr", {}, el("th", {}, "metric"), el("th", {}, "days"), el("th", {}, "last"), el("th", {}, "")));
    for (const c of d.columns || []) {
      const cells = days.map((r) => r[c.name]);
      const vals = cells.map((x) => (x && typeof x.value === "number" ? x.value : null));
      const present = vals.filter((v) => v !== null);
      const W = 220, H = 34, lo = Math.min(...present), hi = Math.max(...present), n = Math.max(1, days.length - 1);
      const X = (i) => 4 + (i / n) * (W - 8), Y = (v) => (hi === lo ? H / 2 : 4 + (1 - (v - lo) / (hi - lo)) * (H - 8));
      const svg = sv("svg", { viewBox: `0 0 ${W} ${H}`, style: "width: 220px; height: 34px", "data-metric": c.name, "data-points": present.length });
      const path = vals.map((v, i) => (v === null ? null : X(i).toFixed(1) + "," + Y(v).toFixed(1))).filter(Boolean).join(" ");
      if (present.length > 1) svg.append(sv("polyline", { class: "line", points: path, stroke: "var(--line-3)" }));
      vals.forEach((v, i) => {
        if (v === null) return;
        const cell = cells[i];
        const twice = Array.isArray(cell.also) && cell.also.length > 0;
        const others = twice ? "; also " + cell.also.map((a) => a.from + " " + a.value).join(", ") : "";
        svg.append(sv("circle", { cx: X(i), cy: Y(v), r: twice ? 3.2 : 2.2, class: twice ? "twice" : null, fill: twice ? "var(--line-1)" : "var(--line-3)",
          "data-day": days[i].day, "data-from": cell.from }, sv("title", {}, days[i].day + ": " + v + " " + (c.unit || "") + " from " + cell.from + others)));
      });
      const last = [...vals].reverse().find((v) => v !== null);
      table.append(el("tr", {}, el("td", { title: (c.sources || []).join(", ") }, c.name + (c.unit ? " (" + c.unit + ")" : "")),
        el("td", { class: "num" }, present.length + "/" + days.length), el("td", { class: "num" }, last === undefined ? "—" : String(last)), el("td", {}, svg)));
    }
    root.append(table, el("p", { class: "note" }, "A larger red dot: two devices measured that day; hover for both values. Nothing is averaged across devices."));
  },
});
