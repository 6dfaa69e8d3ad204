/* Making elements on the annotate page.
 *
 * Every part of the page draws through el(): attributes and children given
 * as plain data, text only ever through textContent or text nodes, so a
 * message's text can never become markup. nextId() gives ids unique on the
 * page, for a widget's inputs and the labels that name them.
 */

var uid = 0;

// An element with `attributes` (false, null and undefined leave one out;
// true sets it empty; "text" sets the textContent) and `children` (strings
// become text nodes; null and undefined are skipped).
export function el(tag, attributes, children) {
  var node = document.createElement(tag);
  Object.keys(attributes || {}).forEach(function (key) {
    var value = attributes[key];
    if (value === false || value === null || value === undefined) {
      return;
    }
    if (key === "text") {
      node.textContent = value;
    } else {
      node.setAttribute(key, value === true ? "" : String(value));
    }
  });
  (children || []).forEach(function (child) {
    if (child !== null && child !== undefined) {
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
  });
  return node;
}

export function nextId(prefix) {
  uid += 1;
  return prefix + "-" + uid;
}
