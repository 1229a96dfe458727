// vitals_query: the nights of a sleep collection, a zoomable chart of a series, the workouts of an
// exercise collection, else a short table. Which one is the server's to say (vitals_view_data's
// `kind`), not this page's to guess.
V.register({
  match: (tool, d) => tool === "vitals_query" || (d && typeof d.collection === "string" && "data" in d),
  async render(root, d, input) {
    const { el } = V;
    const range = d.range || {};
    // A series kept to a span inside its days (`from`/`to`, a workout) is drawn zoomed to that span.
    const w = /(\d{4}-[\d:T.-]+Z) up to (\d{4}-[\d:T.-]+Z)/.exec((d.notices && d.notices.window) || "");
    if (w && range.start) return Series.draw(root, d.collection, range, [Date.parse(w[1]), Date.parse(w[2])]);
    // One read by id (an activity) is drawn by that id; a range by its days.
    const ask = input && input.id ? { collection: d.collection, id: String(input.id) } : range.start ? { collection: d.collection, start: range.start, end: range.end } : null;
    const a = ask ? await V.callTool("vitals_view_data", ask) : { kind: "records" };
    if (a.kind === "workouts") return Workout.list(root, d.collection, range, a);
    if (a.kind === "workout") return Workout.draw(root, a);
    if (a.kind === "night") {
      root.append(...V.banners(a.notices, a.synthetic));
      return Night.draw(root, d.collection, a.nights || []);
    }
    if (a.kind === "series") return Series.draw(root, d.collection, range, null, a);
    root.append(el("h2", {}, d.collection), ...V.banners(d.notices, d.synthetic));
    const data = d.data || {};
    if (!Array.isArray(data.columns)) { root.append(el("p", { class: "note" }, d.count + " records; the text answer has them.")); return; }
    const rows = data.rows.slice(0, 60);
    root.append(el("table", {}, el("tr", {}, data.columns.map((c) => el("th", {}, c))),
      rows.map((r) => el("tr", {}, r.map((v) => el("td", { class: typeof v === "number" ? "num" : null }, v === null ? "—" : typeof v === "object" ? JSON.stringify(v) : String(v)))))));
    if (data.rows.length > rows.length) root.append(el("p", { class: "note" }, "First " + rows.length + " of " + data.rows.length + " rows; the text answer has every row."));
  },
});
