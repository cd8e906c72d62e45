// Small DOM helpers shared by the pages' scripts: an HTML element with its text and class, and an
// SVG element with its attributes (charts are inline SVG, no library).  Text is always set as text,
// never as HTML: names and messages come from other players.

export const SVG = "http://www.w3.org/2000/svg";

/** An element ``tag`` holding ``text`` (as text) with the class ``cls``. */
export const el = (tag, text, cls) => {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
};

/** An SVG element ``tag`` with the attributes ``attrs``. */
export const svg = (tag, attrs = {}) => {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
};
