// The rules engine's sentence on a confrontation (why a side leads an alignment), in the page's
// language.  The engine writes it in English from a small fixed grammar (jericho_game/strength.py);
// this reads it back into a catalog message and its values and says it again with t().  The
// server does the same for its own texts (jericho_game/web/reasons.py: the same messages, and
// tests/web/i18n/test_reasons.py keeps the two equal on every sentence).
import { t } from "./i18n.js";

const SIDE = "(South|North|south|north)";
const HEAD = `${SIDE} (\\S+) vs ${SIDE} (\\S+): `;
const HEAD_ARGS = ["a", "ta", "b", "tb"];

// [pattern, message (English: t() translates it), names of its groups]; most specific first.
// Each message is written out inside t() so that the catalog's extractor finds it.
const RULES = [
  ["no tower on this alignment: nobody leads", () => t("no tower on this alignment: nobody leads"), []],
  [`${SIDE} has no tower on this alignment: nobody leads`,
    (a) => t("{side} has no tower on this alignment: nobody leads", a), ["side"]],
  [`${HEAD}a side has no tower, nobody leads`,
    (a) => t("{a} {ta} vs {b} {tb}: a side has no tower, nobody leads", a), HEAD_ARGS],
  [`${HEAD}${SIDE} leads, a tower of two or more pieces beats a single piece`,
    (a) => t("{a} {ta} vs {b} {tb}: {win} leads, a tower of two or more pieces beats a single piece", a),
    [...HEAD_ARGS, "win"]],
  [`${HEAD}${SIDE} leads, equal sizes down to the shorter tower's base and ${SIDE}'s is taller`,
    (a) => t("{a} {ta} vs {b} {tb}: {win} leads, equal sizes down to the shorter tower's base and {win}'s is taller", a),
    [...HEAD_ARGS, "win", "win"]],
  [`${HEAD}${SIDE} leads, (top piece|\\d\\w\\w piece from the top) size (\\d) beats (\\d)`,
    (a) => t("{a} {ta} vs {b} {tb}: {win} leads, {which} size {big} beats {small}", a),
    [...HEAD_ARGS, "win", "which", "big", "small"]],
  [`${HEAD}equal sizes all the way down: equally strong, nobody leads`,
    (a) => t("{a} {ta} vs {b} {tb}: equal sizes all the way down: equally strong, nobody leads", a), HEAD_ARGS],
].map(([source, say, names]) => [new RegExp(`^${source}$`), say, names]);

const words = () => ({
  South: t("South"),
  North: t("North"),
  "(empty)": t("(empty)"),
  "top piece": t("top piece"),
  "2nd piece from the top": t("2nd piece from the top"),
  "3rd piece from the top": t("3rd piece from the top"),
  "4th piece from the top": t("4th piece from the top"),
});

/** A confrontation's reason (Game.confrontation().reason) in the page's language; any other
 * text comes back as it is. */
export function reasonText(text) {
  for (const [pattern, say, names] of RULES) {
    const m = pattern.exec(text.trim());
    if (!m) continue;
    const w = words();
    const args = {};
    names.forEach((name, i) => {
      let v = m[i + 1];
      if (["side", "a", "b", "win"].includes(name)) v = w[v.charAt(0).toUpperCase() + v.slice(1)];
      else if (["ta", "tb", "which"].includes(name) && v in w) v = w[v];
      args[name] = v;
    });
    return say(args);
  }
  return text;
}
