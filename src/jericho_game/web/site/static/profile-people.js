// The profile's people part (static/people.js), added once profile.js has drawn the page's head.
import { profileExtras } from "./people.js";

const main = document.getElementById("profile");
const name = decodeURIComponent(location.pathname.split("/").pop() || "");
let started = false;
const start = () => {
  if (started || !main.querySelector(".profile-head")) return false;
  started = true;
  profileExtras(main, name);
  return true;
};
if (!start()) {
  const watch = new MutationObserver(() => { if (start()) watch.disconnect(); });
  watch.observe(main, { childList: true });
}
