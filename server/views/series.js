// A series (heart rate, intraday, battery): every sample at full resolution, asked of the server
// through vitals_view_data, so the model never reads them. Drag across the chart to zoom: the
// span is asked again at the finest resolution that fits.
const Series = (() => {
  const { el, lineChart } = V;

  /** {name: [[ms, v], ...]} of every numeric column of a {columns, rows} answer, by its time column. */
  function columnsToSeries(data) {
    if (!data || !Array.isArray(data.columns) || !Array.isArray(data.rows)) return [];
    const t = data.columns.findIndex((c) => /^(timestamp|time|start|at|date_time)$/.test(c));
    if (t < 0) return [];
    const out = [];
    data.columns.forEach((c, i) => {
      // The time column, and other stamps beside it (`timestamp_unix`), are the x axis, not values.
      if (i === t || /timestamp|_unix$|_ms$|^time/.test(c)) return;
      const points = [];
      for (const row of data.rows) {
        const ms = typeof row[t] === "number" ? row[t] * 1000 : Date.parse(row[t]);
        if (typeof row[i] === "number" && !Number.isNaN(ms)) points.push([ms, row[i]]);
      }
      if (points.length) out.push({ name: c, points });
    });
    return out;
  }

  /** Draw `collection` over the days of `range`, zoomable; returns when the first chart is drawn. */
  async function draw(root, collection, range, span, first) {
    const box = el("section", { class: "series", "data-collection": collection });
    root.append(box);
    const args = { collection, start: range.start, end: range.end };
    if (span) { args.from = new Date(span[0]).toISOString(); args.to = new Date(span[1]).toISOString(); }
    const a = first || (await V.callTool("vitals_view_data", args));
    box.append(el("h2", {}, collection + (span ? " (zoomed)" : "")), ...V.banners(a.notices, a.synthetic));
    const series = columnsToSeries(a.data);
    const applied = a.resolution ? a.resolution.applied : "raw";
    const res = applied !== "raw" ? "in buckets of " + applied + " from " + a.resolution.raw_samples + " samples (drag across the chart to see every sample)" : "every sample";
    box.append(el("p", { class: "note", "data-count": a.count, "data-resolution": applied }, a.count + " points, " + res + "."));
    const chart = lineChart(series.slice(0, 3), {
      from: span && span[0], to: span && span[1],
      onZoom: (from, to) => { box.remove(); draw(root, collection, range, [from, to]); },
    });
    box.append(chart);
    if (span) {
      const back = el("button", { type: "button" }, "Whole range");
      back.addEventListener("click", () => { box.remove(); draw(root, collection, range, null); });
      box.append(back);
    }
    return a;
  }

  return { draw, columnsToSeries };
})();
