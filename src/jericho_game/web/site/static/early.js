// Run before the page is drawn (a classic script in <head>, not a module): the remembered
// theme and contrast are on <html> before the first paint, so a dark page never flashes light.
(() => {
  const root = document.documentElement;
  let theme = null, contrast = null;
  try {
    theme = localStorage.getItem("jericho:theme");
    contrast = localStorage.getItem("jericho:contrast");
  } catch { /* private mode */ }
  root.dataset.theme = theme || (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
  root.dataset.contrast = contrast || (matchMedia("(prefers-contrast: more)").matches ? "high" : "normal");
  // the board and piece themes (looks.js): this browser's choice, else the defaults
  let board = null, pieces = null;
  try {
    board = localStorage.getItem("jericho:board");
    pieces = localStorage.getItem("jericho:pieces");
  } catch { /* private mode */ }
  root.dataset.board = ["wood", "slate", "paper"].includes(board) ? board : "wood";
  root.dataset.pieces = ["classic", "bright", "deep"].includes(pieces) ? pieces : "classic";
})();
