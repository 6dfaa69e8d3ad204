// Starts Redoc on the API docs page: a file rather than drf-spectacular's inline script, for
// the site's Content-Security-Policy.
(function () {
  const script = document.currentScript;
  window.Redoc.init(script.dataset.specUrl, {}, document.getElementById("redoc-container"));
})();
