// A tournament in words (the list, its page, the lobby): "Arena · 3 + 2 · 45 min · rated".
import { t } from "./i18n.js";

export function tournamentText(x) {
  const kind = x.kind === "arena" ? t("Arena") : t("Swiss");
  const length = x.kind === "arena" ? t("{n} min", { n: x.minutes }) : t("{n} rounds", { n: x.rounds });
  return `${kind} · ${x.clock} + ${x.increment || 0} · ${length} · ${x.rated ? t("rated") : t("casual")}`;
}
