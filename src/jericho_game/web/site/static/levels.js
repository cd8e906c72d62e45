// The AI levels' names in the page's language: the server knows them by id (easy, medium...,
// jericho_game/players/levels.py); a research player's spec (mcts:sims=2000) is shown as it is.
import { t } from "./i18n.js";

const NAMES = {
  easy: () => t("Easy"),
  casual: () => t("Casual"),
  medium: () => t("Medium"),
  hard: () => t("Hard"),
  strong: () => t("Strong"),
  advanced: () => t("Advanced"),
  skilled: () => t("Skilled"),
  veteran: () => t("Veteran"),
  challenger: () => t("Challenger"),
  elite: () => t("Elite"),
  expert: () => t("Expert"),
  master: () => t("Master"),
  random: () => t("Random"),
  greedy: () => t("Greedy"),
};

/** A level id's name for people ("Facile" for easy in French), a frozen level's with its version
 * ("Maître v1" for master-v1); anything else, capitalised. */
export function levelName(id) {
  const name = String(id ?? "");
  if (NAMES[name]) return NAMES[name]();
  const frozen = /^([a-z]+)-v(\d+)$/.exec(name);
  if (frozen && NAMES[frozen[1]]) return `${NAMES[frozen[1]]()} v${frozen[2]}`;
  return name.charAt(0).toUpperCase() + name.slice(1);
}
