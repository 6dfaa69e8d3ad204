// Loaded just before Redoc's bundle on the API docs page. Redoc writes <style> elements: its
// bundled CSS as the bundle loads, then its styled components. The site's Content-Security-
// Policy refuses inline styles without this page's nonce, and Redoc can only be handed the
// nonce after it has loaded, so each <style> element inserted into the page gets the nonce
// this script tag carries (style-src allows it on this page only, config/urls.py). Only
// scripts the page already runs can insert elements, so this admits nothing else.
(function () {
  const nonce = document.currentScript.nonce;
  for (const method of ["appendChild", "insertBefore"]) {
    const original = Node.prototype[method];
    Node.prototype[method] = function (node, ...rest) {
      if (node instanceof HTMLStyleElement && !node.nonce) {
        node.nonce = nonce;
      }
      return original.call(this, node, ...rest);
    };
  }
})();
