// What a page that needs the server says when it cannot reach it (issue 34: /learn and /puzzles
// opened offline as empty shells saying "Failed to fetch").  The lessons and the puzzles check every
// move on the server, so offline they say so plainly, point to what does work offline (the rules),
// and load again by themselves once the browser is back online.
import { t } from "./i18n.js";

/** Whether `err` (a rejected fetch) means the server could not be reached at all. */
export function unreachable(err) {
  return !navigator.onLine || err instanceof TypeError;
}

/** Replace `main`'s content by the offline notice; `what` says what needs the server. */
export function showOffline(main, what) {
  const card = document.createElement("section");
  card.className = "card offline-note";
  card.id = "offline-note";
  card.setAttribute("role", "status");
  const h = document.createElement("h1");
  h.textContent = t("You are offline");
  const p = document.createElement("p");
  p.textContent = `${what} ${t("They come back as soon as the server can be reached again.")}`;
  const links = document.createElement("p");
  const rules = document.createElement("a");
  rules.className = "button primary";
  rules.href = "/rules";
  rules.textContent = t("Read the rules");
  const again = document.createElement("a");
  again.className = "button";
  again.href = location.pathname + location.hash;
  again.id = "offline-retry";
  again.textContent = t("Try again");
  links.append(rules, " ", again);
  card.append(h, p, t("The rules can be read offline."), links);
  main.replaceChildren(card);
  window.addEventListener("online", () => location.reload(), { once: true });
}
