/* Submitted work on the annotate page opens read-only, behind an Edit
 * button (and the key e).
 *
 * The server says which items open so (page data `read_only`: submitted
 * work, annotation.work.selectors.ItemView.opens_read_only); the page then
 * starts with item.editable false, so every key and widget that checks it
 * changes nothing. Edit turns the page editable for this visit: the parts
 * drawn from item.editable are drawn again, Submit shows, and the notice
 * says that changes now go to the submission. The first saved change makes
 * a new version as any draft does (and sends accepted work back to review,
 * annotation.work.submissions). Reopening the item starts read-only again.
 */

// options: part, item ({editable}), redraw() (draws the parts that read
// item.editable again), setStatus (autosave.js), flash (flash.js) and
// focus() (back to the conversation once the button is gone).
export function createEditing(options) {
  var part = options.part;
  var item = options.item;
  var button = part("edit");
  var locked = Boolean(button) && !item.editable;

  // Turns a read-only submitted item editable; false when there is nothing to unlock.
  function edit() {
    if (!locked) {
      return false;
    }
    locked = false;
    item.editable = true;
    options.redraw();
    ["submit", "skip"].forEach(function (name) {
      var shown = part(name);
      if (shown) {
        shown.hidden = false;
      }
    });
    button.hidden = true;
    part("read-only").dataset.editing = "";
    part("read-only-message").textContent = "You are editing your submitted item: each change is saved to your submission as you go.";
    options.setStatus("All changes saved");
    options.flash("Editing: your changes are saved to your submission.");
    return true;
  }

  if (button) {
    button.addEventListener("click", function () {
      if (edit()) {
        options.focus();
      }
    });
  }

  return {
    edit: edit,
    // Whether the item is submitted work still read-only (Edit not pressed yet).
    locked: function () {
      return locked;
    },
  };
}
