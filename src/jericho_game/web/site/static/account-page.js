// The log-in and sign-up page (/login, /signup): one form, two endpoints.
import { postJSON, safeNext, whoami } from "./account.js";
import { t } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const signup = location.pathname === "/signup";
// only a path on this site: never an open redirect (the server has already dropped a bad one)
const asked = new URLSearchParams(location.search).get("next");
const target = safeNext(asked);
const next = target === "/" ? null : target;

/** What is wrong with a new username (the server's rules, web/accounts/accounts.py), or "" when nothing. */
function usernameProblem(name) {
  const n = [...name].length;
  if (n > 24) return t("A username is at most 24 characters: this one has {n}.", { n });
  if (n < 3) return t("A username has at least 3 characters: this one has {n}.", { n });
  const bad = [...name].find((c) => !/[A-Za-z0-9_-]/.test(c));
  if (bad) return t("A username holds only letters a–z, digits, “_” and “-”: “{char}” is not allowed.", { char: bad });
  if (!/[A-Za-z0-9]/.test(name[0])) return t("A username starts with a letter or a digit.");
  return "";
}

/** Say what is wrong next to the form, and put the focus on the field to mend. */
function refuse(field, text) {
  $("account-error").textContent = text;
  if (field) {
    field.setAttribute("aria-invalid", "true");
    field.setAttribute("aria-errormessage", "account-error");
    field.focus();
  }
}

async function init() {
  // the form is handled from the start: a submit while the account is still being fetched must
  // not fall through to the browser's own GET (it put the password in the address)
  $("account-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("account-submit").disabled = true;
    $("account-error").textContent = "";
    for (const f of [$("username"), $("password")]) f.removeAttribute("aria-invalid");
    const body = { username: $("username").value.trim(), password: $("password").value };
    // the browser's own checks are off (novalidate): they said "Please match the requested format"
    const problem = signup ? usernameProblem(body.username) : (body.username ? "" : t("Enter your username."));
    if (problem || !body.password) {
      if (problem) refuse($("username"), problem);
      else refuse($("password"), t("Enter your password."));
      $("account-submit").disabled = false;
      return;
    }
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
    // the server's sentence may end in a full stop: the page's own sentence adds one ("incorrect.." in issue 34)
    const why = (res.data.message || t("error")).replace(/[.\s]+$/, "");
    const field = { bad_username: $("username"), username_taken: $("username"), bad_password: $("password") }[res.data.error];
    refuse(field, signup ? t("Could not sign up: {why}.", { why }) : t("Could not log in: {why}.", { why }));
    $("account-submit").disabled = false;
    if (res.data.error === "csrf") whoami(true);
  });
  const me = await whoami();
  $("account-title").textContent = signup ? t("Sign up") : t("Log in");
  $("account-submit").textContent = signup ? t("Create account") : t("Log in");
  document.title = `Jericho · ${signup ? t("Sign up") : t("Log in")}`;
  $("password").autocomplete = signup ? "new-password" : "current-password";
  // a new password: 10 characters or more (web/accounts/passwords.py); an older, shorter one still logs in
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
