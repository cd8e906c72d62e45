// The settings page's "Your data" (web/site/owndata.py): the archive of everything the site holds
// about the account, and closing the account (its password asked again).
import { postJSON, whoami } from "./account.js";
import { t } from "./i18n.js";

const $ = (id) => document.getElementById(id);

async function init() {
  if (!(await whoami()).account) { $("owndata-login").hidden = false; return; }
  $("owndata").hidden = false;
  $("close-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("close-error").textContent = "";
    const password = $("close-password").value;
    if (!password) { $("close-error").textContent = t("Type your password to confirm."); return; }
    if (!window.confirm(t("Close your account for good? This cannot be undone."))) return;
    const res = await postJSON("/api/account/close", { password });
    if (!res.ok) { $("close-error").textContent = res.data.message || t("error"); return; }
    location.assign("/?closed=1");
  });
}

init();
