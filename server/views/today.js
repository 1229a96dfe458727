// vitals_today: last night of every provider in the report, one above the other.
V.register({
  match: (tool, d) => tool === "vitals_today" || (d && Array.isArray(d.providers) && d.today !== undefined),
  async render(root, d) {
    const { el } = V;
    root.append(el("h2", {}, "Last night"));
    let drawn = 0;
    for (const p of d.providers || []) {
      const sleep = (p.sections || []).find((s) => s.role === "sleep");
      if (!sleep) continue;
      // The latest night the section has (today's may not be synced yet).
      const lastDay = sleep.rows && sleep.rows.length ? sleep.rows[sleep.rows.length - 1][0] : d.today;
      const box = el("div", { "data-provider": p.provider });
      root.append(box);
      await Night.fetchAndDraw(box, p.provider + " (" + sleep.collection + ")", sleep.collection, lastDay, lastDay);
      drawn++;
    }
    if (!drawn) root.append(el("p", { class: "note" }, "No provider in this report has a night to draw."));
  },
});
