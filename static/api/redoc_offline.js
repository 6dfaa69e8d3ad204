// Loaded just before Redoc's bundle on the API docs page. Redoc's sidebar ends with an
// "API docs by Redocly" link whose logo is an image on Redocly's CDN, and no option leaves it
// out. The docs load nothing from elsewhere: an air-gapped site has the same docs, and the
// site's Content-Security-Policy would refuse the image anyway (a refusal each visit, and a
// request to the CDN where the policy is only reported). So an image pointed at that CDN is
// given no address and hidden; the link keeps its words.
(function () {
  const CDN = "https://cdn.redoc.ly/";
  const fromCdn = (value) => String(value).startsWith(CDN);

  const setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    if (this instanceof HTMLImageElement && String(name).toLowerCase() === "src" && fromCdn(value)) {
      this.hidden = true;
      return;
    }
    return setAttribute.call(this, name, value);
  };

  const src = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
  Object.defineProperty(HTMLImageElement.prototype, "src", {
    ...src,
    set(value) {
      if (fromCdn(value)) {
        this.hidden = true;
        return;
      }
      src.set.call(this, value);
    },
  });
})();
