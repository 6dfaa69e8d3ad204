/* The flash line of the annotate page: a short message, read out by screen
 * readers (the element is an assertive live region), that says why a key
 * or a command did nothing, or what it just did. It clears itself.
 */

var FLASH_MS = 6000;

// flash(message) shows `message` in `element` for a few seconds.
export function createFlash(element) {
  var timer = null;

  return function flash(message) {
    element.textContent = message;
    clearTimeout(timer);
    timer = setTimeout(function () {
      element.textContent = "";
    }, FLASH_MS);
  };
}
