// The service worker (served at /sw.js by jericho_game.web.pages, which fills in VERSION and
// ASSETS): the site's static files are kept in a cache named after their version, so a new
// release (any file changed: a new VERSION, so a new worker) is fetched whole on the next load
// and the old cache dropped.  Pages come from the network first, then from the cache, then
// the offline page; the rules page and what it draws with are kept, so they read offline.
// Games themselves need the server: /api and the WebSockets are never cached.
const VERSION = "__VERSION__";
const ASSETS = __ASSETS__;
const CACHE = `jericho-${VERSION}`;
const KEPT = ["/", "/rules", "/learn", "/puzzles", "/offline", "/api/rules.md", "/api/topology", "/manifest.webmanifest"];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll([...ASSETS, ...KEPT])).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k.startsWith("jericho-") && k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

async function networkFirst(request, fallback) {
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    if (response.ok) cache.put(request, response.clone());
    return response;
  } catch {
    return (await cache.match(request, { ignoreSearch: true })) || (fallback && (await cache.match(fallback))) ||
      Response.error();
  }
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== location.origin) return;
  if (url.pathname.startsWith("/static/")) {
    // this version's files: from the cache (they were all fetched at install)
    event.respondWith(caches.open(CACHE).then((c) => c.match(request, { ignoreSearch: true }))
      .then((hit) => hit || fetch(request)));
  } else if (request.mode === "navigate") {
    event.respondWith(networkFirst(request, "/offline"));
  } else if (KEPT.includes(url.pathname)) {
    event.respondWith(networkFirst(request));
  }
  // everything else (the API, the WebSockets): the network only, as without a worker
});
