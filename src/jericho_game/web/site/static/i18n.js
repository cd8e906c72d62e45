// The page scripts' translations: the same gettext catalogs as the server's pages
// (jericho_game/web/locale, docs/web.md "Translations"), put in each page as a JSON blob
// (#i18n-catalog) in the page's language.  Scripts write their texts in English inside t(),
// which is what `pybabel extract -k t` finds.
let catalog = null;

function load() {
  if (catalog === null) {
    try { catalog = JSON.parse(document.getElementById("i18n-catalog")?.textContent || "{}"); }
    catch { catalog = {}; }
  }
  return catalog;
}

/** The page's language ("en" or "fr"), as the server chose it (<html lang>). */
export const lang = () => document.documentElement.lang || "en";

/** The translation of an English message; {name} placeholders are filled from `args`. */
export function t(message, args = {}) {
  const text = load()[message] || message;
  return text.replace(/\{(\w+)\}/g, (m, k) => (k in args ? String(args[k]) : m));
}

/** A number in the page's language (1 234,5 in French). */
export const formatNumber = (n, options) => new Intl.NumberFormat(lang(), options).format(n);

/** A date (and time unless dateOnly) in the page's language. */
export function formatDate(d, dateOnly = false) {
  const date = d instanceof Date ? d : new Date(d);
  return new Intl.DateTimeFormat(lang(), dateOnly ? { dateStyle: "medium" } :
    { dateStyle: "medium", timeStyle: "short" }).format(date);
}
