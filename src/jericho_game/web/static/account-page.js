// The log-in and sign-up page (/login, /signup): one form, two endpoints.
import { postJSON, safeNext, whoami } from "./account.js";
import { t } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const signup = location.pathname === "/signup";
// only a path on this site: never an open redirect (the server has already dropped a bad one)
const asked = new URLSearchParams(location.search).get("next");
const target = safeNext(asked);
const next = target === "/" ? null : target;

async function init() {
  // the form is handled from the start: a submit while the account is still being fetched must
  // not fall through to the browser's own GET (it put the password in the address)
  $("account-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("account-submit").disabled = true;
    $("account-error").textContent = "";
    const body = { username: $("username").value.trim(), password: $("password").value };
    let res;
    try {
      res = await postJSON(signup ? "/api/account/signup" : "/api/account/login", body);
    } catch {
      res = { ok: false, data: { message: t("the server is unreachable") } };
    }
    if (res.ok) {
      location.href = target;
      return;
    }
    $("password").value = "";
    const why = res.data.message || t("error");
    $("account-error").textContent = signup ? t("Could not sign up: {why}.", { why }) : t("Could not log in: {why}.", { why });
    $("account-submit").disabled = false;
    if (res.data.error === "csrf") whoami(true);
  });
  const me = await whoami();
  $("account-title").textContent = signup ? t("Sign up") : t("Log in");
  $("account-submit").textContent = signup ? t("Create account") : t("Log in");
  document.title = `Jericho · ${signup ? t("Sign up") : t("Log in")}`;
  $("password").autocomplete = signup ? "new-password" : "current-password";
  // a new password: 10 characters or more (web/passwords.py); an older, shorter one still logs in
  $("password").minLength = signup ? 10 : 1;
  if (signup) {
    $("password-hint").textContent = t(
      "At least 10 characters, and not a common password: a few words with spaces are easy to remember. " +
      "It is stored only as an Argon2 hash.");
  }
  const sw = $("account-switch");
  const a = document.createElement("a");
  a.href = `${signup ? "/login" : "/signup"}${next ? `?next=${encodeURIComponent(next)}` : ""}`;
  a.textContent = signup ? t("I have an account: log in") : t("No account yet? Sign up");
  if (signup || me.signup) sw.replaceChildren(a);
  if (signup && !me.signup) {
    $("account-error").textContent = t("Sign-up is closed on this server: ask its admin for an account.");
    $("account-submit").disabled = true;
  }
}

init();
