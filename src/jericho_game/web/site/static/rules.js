// Renders the rules (Markdown, served at /api/rules.md) into the page: headings, paragraphs,
// lists, tables, code blocks and inline code/bold/italics/links are enough for docs/rules.md.
// A fenced block in the language "board" is a diagram, drawn with the game's own board:
//   towers: d2=5R d3=1G,2Y     (or "-")
//   leaders: d=north
//   caption: words under the drawing
import { Board } from "./board.js";
import { initContrast } from "./contrast.js";
import { t } from "./i18n.js";

initContrast();
const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function inline(s) {
  return esc(s)
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[^*])\*([^*]+)\*/g, "$1<em>$2</em>")
    .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (m, t, u) => (/^(https?:|#|\/)/.test(u) ? `<a href="${u}">${t}</a>` : t));
}

export function markdown(text) {
  const lines = text.replace(/\r/g, "").split("\n");
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^```/.test(line)) {
      const buf = [];
      const lang = line.slice(3).trim();
      for (i++; i < lines.length && !/^```/.test(lines[i]); i++) buf.push(lines[i]);
      i++;
      if (lang === "board") {
        const spec = Object.fromEntries(buf.map((l) => [l.split(":")[0].trim(), l.slice(l.indexOf(":") + 1).trim()]));
        out.push(`<figure class="diagram" data-towers="${esc(spec.towers || "-")}" data-leaders="${esc(spec.leaders || "")}">` +
          `<svg role="img" aria-label="${esc(spec.caption || "board diagram")}"></svg>` +
          `<figcaption>${inline(spec.caption || "")}</figcaption></figure>`);
      } else {
        out.push(`<pre><code>${esc(buf.join("\n"))}</code></pre>`);
      }
    } else if (/^#{1,6} /.test(line)) {
      const n = line.match(/^#+/)[0].length;
      out.push(`<h${n}>${inline(line.slice(n + 1))}</h${n}>`);
      i++;
    } else if (/^\s*\|/.test(line)) {
      const rows = [];
      for (; i < lines.length && /^\s*\|/.test(lines[i]); i++) rows.push(lines[i]);
      const cells = (r) => r.trim().replace(/^\||\|$/g, "").split("|").map((c) => inline(c.trim()));
      const body = rows.filter((r, k) => k !== 1 || !/^[\s|:-]+$/.test(r));
      const head = cells(body[0]).map((c) => `<th>${c}</th>`).join("");
      const rest = body.slice(1).map((r) => `<tr>${cells(r).map((c) => `<td>${c}</td>`).join("")}</tr>`).join("");
      out.push(`<table><thead><tr>${head}</tr></thead><tbody>${rest}</tbody></table>`);
    } else if (/^\s*([-*]|\d+\.) /.test(line)) {
      const ordered = /^\s*\d+\./.test(line);
      const items = [];
      for (; i < lines.length && /^\s*([-*]|\d+\.) |^\s{2,}\S/.test(lines[i]); i++) {
        if (/^\s*([-*]|\d+\.) /.test(lines[i])) items.push(lines[i].replace(/^\s*([-*]|\d+\.) /, ""));
        else items[items.length - 1] += " " + lines[i].trim();
      }
      const tag = ordered ? "ol" : "ul";
      out.push(`<${tag}>${items.map((t) => `<li>${inline(t)}</li>`).join("")}</${tag}>`);
    } else if (line.trim() === "") {
      i++;
    } else {
      const buf = [];
      for (; i < lines.length && lines[i].trim() !== "" && !/^(#|```|\s*\||\s*([-*]|\d+\.) )/.test(lines[i]); i++) {
        buf.push(lines[i]);
      }
      out.push(`<p>${inline(buf.join(" "))}</p>`);
    }
  }
  return out.join("\n");
}

function pairs(text, sep) {
  return text.split(/\s+/).filter((x) => x.includes("=")).map((x) => x.split("=")).map(([k, v]) => [k, sep ? v.split(sep) : v]);
}

async function drawDiagrams() {
  const figures = document.querySelectorAll("figure.diagram");
  if (!figures.length) return;
  const topo = await (await fetch("/api/topology")).json();
  for (const fig of figures) {
    const board = new Board(fig.querySelector("svg"), topo, { onCell() {}, onAlignment() {}, onCellInfo() {} },
      { interactive: false });
    board.build();
    board.render({ towers: Object.fromEntries(pairs(fig.dataset.towers, ",")),
      leaders: Object.fromEntries(pairs(fig.dataset.leaders)), last: null });
  }
}

const main = document.getElementById("rules");
fetch("/api/rules.md")
  .then((r) => r.text())
  .then((text) => { main.innerHTML = markdown(text); return drawDiagrams(); })
  .catch(() => { main.textContent = t("Could not load the rules."); });
