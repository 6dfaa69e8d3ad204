/* The summary above Submit: how far the annotator is with the tree, in one
 * line ("5/7 messages rated, 1/2 comparisons done, path chosen"). It is a
 * polite live region, so a screen reader hears it change after each answer
 * without losing its place.
 */

import { summaryParts } from "./progress.js";

// `element` (hidden when the item has no tree scheme); returns update().
export function createSummary(element, answers, tree) {
  return function update() {
    if (!element) {
      return;
    }
    var parts = summaryParts(answers, tree);
    element.hidden = !parts.length;
    var text = parts.join(", ");
    if (element.textContent !== text) {
      element.textContent = text;
    }
  };
}
