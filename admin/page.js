// Loads the page's graph images and records on <body> how it went:
// data-images-total (graph images on the page), -requested (given a src),
// -loaded, -failed, and data-images-done="1" once the observer has placed
// every lazy image and every requested image has loaded or failed and none
// waits; a failed image gets class "broken".
// Images with a src load at once; those with data-src (class "lazy") are
// requested only when they come within 300px of the window
// (IntersectionObserver), at most 3 at a time, so a device page of
// thousands of rows asks for the graphs on screen and not the rest.
// data-dom-interactive-ms and data-first-paint-ms are the navigation's
// timings, for the browser benchmark.
(function () {
  var b = document.body, MAX = 3;
  var imgs = Array.prototype.slice.call(document.querySelectorAll("img"));
  var requested = 0, loaded = 0, failed = 0, active = 0, queue = [], unplaced = 0;
  function show() {
    b.setAttribute("data-images-total", imgs.length);
    b.setAttribute("data-images-requested", requested);
    b.setAttribute("data-images-loaded", loaded);
    b.setAttribute("data-images-failed", failed);
    if (loaded + failed === requested && queue.length === 0 && unplaced === 0) b.setAttribute("data-images-done", "1");
    else b.removeAttribute("data-images-done");
  }
  function settle(img, lazy) {
    if (img.naturalWidth > 0) { loaded++; } else { failed++; img.classList.add("broken"); }
    if (lazy) { active--; pump(); }
    show();
  }
  function watch(img, lazy) {
    requested++;
    if (img.complete && !lazy) { settle(img, false); return; }
    img.addEventListener("load", function () { settle(img, lazy); }, { once: true });
    img.addEventListener("error", function () { settle(img, lazy); }, { once: true });
  }
  function pump() {
    while (active < MAX && queue.length > 0) {
      var img = queue.shift();
      active++;
      watch(img, true);
      img.src = img.getAttribute("data-src");
    }
  }
  var lazy = imgs.filter(function (img) { return img.hasAttribute("data-src"); });
  imgs.forEach(function (img) { if (!img.hasAttribute("data-src")) watch(img, false); });
  if (lazy.length > 0 && "IntersectionObserver" in window) {
    // The observer reports each image once as it starts; until then an
    // image's place (near the window or not) is unknown.
    var placed = new WeakSet();
    unplaced = lazy.length;
    var io = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        if (!placed.has(e.target)) { placed.add(e.target); unplaced--; }
        if (!e.isIntersecting) return;
        io.unobserve(e.target);
        queue.push(e.target);
      });
      pump();
      show();
    }, { rootMargin: "300px 0px" });
    lazy.forEach(function (img) { io.observe(img); });
  } else {
    Array.prototype.push.apply(queue, lazy);
    pump();
  }
  show();
  function timings() {
    var nav = performance.getEntriesByType("navigation")[0];
    if (nav) b.setAttribute("data-dom-interactive-ms", Math.round(nav.domInteractive));
    performance.getEntriesByType("paint").forEach(function (p) {
      if (p.name === "first-contentful-paint") b.setAttribute("data-first-paint-ms", Math.round(p.startTime));
    });
  }
  timings();
  if ("PerformanceObserver" in window) {
    try {
      new PerformanceObserver(timings).observe({ type: "paint", buffered: true });
    } catch (e) { /* no paint timing: the attribute stays absent */ }
  }
})();
