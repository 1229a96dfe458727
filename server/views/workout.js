// A workout (a Polar exercise, a Garmin activity): heart rate, pace or speed, power, altitude and
// cadence over time, every sample the workout holds; its laps or km splits; its time in heart-rate
// zones. The samples are asked of the server through vitals_view_data, never put in the answer the
// model reads. No map: tiles would need the network.
const Workout = (() => {
  const { el, sv, clock, day, lineChart } = V;
  const ON_FOOT = /run|walk|hik|trail|foot/i;

  function mmss(s) {
    if (typeof s !== "number") return "—";
    const t = Math.round(s), h = Math.floor(t / 3600), m = Math.floor((t % 3600) / 60), r = String(t % 60).padStart(2, "0");
    return h ? h + ":" + String(m).padStart(2, "0") + ":" + r : m + ":" + r;
  }
  function km(m) { return typeof m === "number" ? (m / 1000).toFixed(2) + " km" : "—"; }
  function title(w) {
    const at = w.start ? Date.parse(w.start) : NaN;
    return [w.sport ? w.sport.toLowerCase().replace(/_/g, " ") : "workout", Number.isNaN(at) ? null : day(at) + " " + clock(at), mmss(w.duration_s), w.distance_m ? km(w.distance_m) : null]
      .filter(Boolean).join(" · ");
  }

  // On foot, speed reads as pace (min/km); a sample standing still has no pace and is left out, said.
  function asDrawn(w, t) {
    if (t.what !== "speed" || !ON_FOOT.test(w.sport || "")) return { name: t.what + " (" + t.unit + ")", points: t.points, left: 0 };
    const perKmH = t.unit === "m/s" ? 3.6 : 1;
    const points = t.points.filter((p) => p[1] * perKmH >= 1).map((p) => [p[0], 60 / (p[1] * perKmH)]);
    return { name: "pace (min/km)", points, left: t.points.length - points.length };
  }

  function traces(w) {
    const box = el("div", { class: "traces" });
    for (const t of w.traces) {
      const d = asDrawn(w, t);
      const how = t.compacted_from_s ? "means of " + t.interval_s + " s buckets of " + t.compacted_from_s + " s samples" : "every sample, " + t.interval_s + " s apart";
      const left = d.left ? "; " + d.left + " standing-still samples have no pace" : "";
      box.append(el("div", { class: "trace", "data-trace": t.what, "data-field": t.field, "data-samples": t.points.length },
        el("h3", {}, d.name), el("p", { class: "note" }, t.points.length + " samples (" + how + left + ")."), lineChart([d], { height: 110 })));
    }
    if (!w.traces.length) box.append(el("p", { class: "note" }, "This workout holds no sample series."));
    return box;
  }

  function laps(w) {
    if (!w.laps.length) return null;
    // On foot a lap reads as pace, otherwise as speed.
    const foot = ON_FOOT.test(w.sport || "");
    const rate = (l) => !(l.seconds && l.distance_m) ? "—" : foot ? mmss(l.seconds / (l.distance_m / 1000)) + " /km" : (l.distance_m / l.seconds * 3.6).toFixed(1) + " km/h";
    return el("div", { class: "laps", "data-laps": w.laps.length }, el("h3", {}, w.laps_are || "laps"),
      el("table", {}, el("tr", {}, ["#", "time", "distance", foot ? "pace" : "speed", "avg HR"].map((h) => el("th", {}, h))),
        w.laps.map((l) => el("tr", { "data-lap": l.n, "data-seconds": l.seconds },
          el("td", {}, String(l.n)), el("td", { class: "num" }, mmss(l.seconds)), el("td", { class: "num" }, km(l.distance_m)),
          el("td", { class: "num" }, rate(l)),
          el("td", { class: "num" }, typeof l.avg_hr_bpm === "number" ? Math.round(l.avg_hr_bpm) + " bpm" : "—")))));
  }

  function zones(w) {
    if (!w.zones.length) return null;
    const W = 640, rowH = 18, L = 150, most = Math.max(1, ...w.zones.map((z) => z.seconds));
    const svg = sv("svg", { viewBox: `0 0 ${W} ${w.zones.length * rowH}`, role: "img", "aria-label": "time in heart-rate zones", class: "zones" });
    w.zones.forEach((z, i) => {
      const bounds = typeof z.lower_bpm === "number" ? " (" + z.lower_bpm + "–" + z.upper_bpm + " bpm)" : z.below_first ? " (below zone 1)" : "";
      svg.append(sv("text", { x: 0, y: i * rowH + 12 }, "zone " + z.index + bounds),
        sv("rect", { class: "zone", "data-zone": z.index, "data-seconds": z.seconds, x: L, y: i * rowH + 3, height: rowH - 6,
          width: ((z.seconds / most) * (W - L - 60)).toFixed(1), fill: `var(--line-${(i % 3) + 1})` }),
        sv("text", { x: L + (z.seconds / most) * (W - L - 60) + 4, y: i * rowH + 12 }, mmss(z.seconds)));
    });
    return el("div", {}, el("h3", {}, "time in heart-rate zones"), svg);
  }

  /** One workout from vitals_view_data (`kind: "workout"`). */
  function draw(root, a) {
    const w = a.workout;
    const box = el("section", { class: "workout", "data-workout": w.id || "" }, el("h2", {}, title(w)), ...V.banners(a.notices, a.synthetic),
      traces(w), laps(w), zones(w));
    root.append(box);
    return box;
  }

  /** The workouts of the answer's days: the latest drawn, any other a click away. */
  async function list(root, collection, range, a) {
    root.append(el("h2", {}, collection), ...V.banners(a.notices, a.synthetic));
    const all = a.workouts || [];
    if (!all.length) { root.append(el("p", { class: "note" }, "No workout in these days.")); return; }
    const slot = el("div", {});
    const pick = async (w) => {
      slot.replaceChildren(el("p", { class: "note" }, "Reading every sample of " + title(w) + "…"));
      const one = await V.callTool("vitals_view_data", { collection, start: range.start, end: range.end, id: w.id });
      slot.replaceChildren();
      draw(slot, one);
    };
    root.append(el("div", { class: "picker" }, all.map((w) => {
      const b = el("button", { type: "button", "data-pick": w.id }, title(w));
      b.addEventListener("click", () => pick(w));
      return b;
    })), slot);
    await pick(all[all.length - 1]);
  }

  return { draw, list };
})();
