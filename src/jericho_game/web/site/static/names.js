// The player's display name: chosen once, kept in this browser (localStorage), sent with new
// games, joins and hello.  The server checks it again (web/common/names.py); this check only spares a
// round trip.  Names are only ever shown with textContent, never as HTML.
import { t } from "./i18n.js";

const KEY = "jericho:name";
const MAX = 24;
// control, format (bidi, zero-width), separators, private use, surrogates, unassigned
const BANNED = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}\p{Cn}\u115f\u1160\u3164\uffa0\u2800]/u;

export function storedName() {
  try { return localStorage.getItem(KEY) || ""; } catch { return ""; }
}

/** {name} when acceptable (trimmed, spaces collapsed), else {error}. */
export function checkName(raw) {
  const text = String(raw ?? "").normalize("NFC");
  const bad = text.match(BANNED);
  if (bad) {
    const code = bad[0].codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
    return { error: t("A name cannot hold control or invisible characters (U+{code}).", { code }) };
  }
  const name = text.replace(/\p{Zs}+/gu, " ").trim();
  if (!name) return { error: t("A name needs at least one visible character.") };
  if ([...name].length > MAX) return { error: t("A name is at most {n} characters.", { n: MAX }) };
  return { name };
}

export function saveName(raw) {
  const r = checkName(raw);
  if (r.name) { try { localStorage.setItem(KEY, r.name); } catch { /* private mode */ } }
  return r;
}

/** Wire a name form: an input prefilled with the stored name, saved on submit or change. */
export function nameForm(form, input, out, onSaved) {
  input.value = storedName();
  const save = (e) => {
    if (e) e.preventDefault();
    const r = saveName(input.value);
    out.textContent = r.error || (r.name ? t("Saved: other players see you as “{name}”.", { name: r.name }) : "");
    out.className = r.error ? "error" : "note";
    if (r.name) { input.value = r.name; if (onSaved) onSaved(r.name); }
    return r;
  };
  form.addEventListener("submit", save);
  return save;
}
