
// Counts the page's graph images as they settle and records the result on
// <body> (data-images-total, -loaded, -failed, and data-images-done="1" when
// every image has loaded or failed); a failed image gets class "broken".
(function () {
  var imgs = Array.prototype.slice.call(document.images);
  var loaded = 0, failed = 0, b = document.body;
  function show() {
    b.setAttribute("data-images-total", imgs.length);
    b.setAttribute("data-images-loaded", loaded);
    b.setAttribute("data-images-failed", failed);
    if (loaded + failed === imgs.length) b.setAttribute("data-images-done", "1");
  }
  function settle(img) {
    if (img.naturalWidth > 0) { loaded++; } else { failed++; img.classList.add("broken"); }
    show();
  }
  imgs.forEach(function (img) {
    if (img.complete) { settle(img); return; }
    img.addEventListener("load", function () { settle(img); }, { once: true });
    img.addEventListener("error", function () { settle(img); }, { once: true });
  });
  show();
})();
