/* The annotate page (templates/annotation/annotate.html): the entry module.
 *
 * Starts from the json_script block "annotate-data" (the item as the API
 * gives it, the schemes' normalised configs, the API URLs) and wires the
 * parts in annotate/, one module per concern:
 *
 *   tree_shape.js         levels, branch points, collapsed stretches (no DOM)
 *   tree_view.js          the rows: a list of turns or a tree; focus, folding
 *   long_messages.js      rows show a message's first lines, "Show more"
 *   focus_view.js         one path at a time, branch points' replies as tabs
 *   answers.js            the answers, keyed by scheme and node id; the payload
 *   widgets.js            a widget builder per annotation type
 *   widget_toolkit.js     widget files' types (window.BranchpointWidgets)
 *   progress.js           counting what is answered (marks and summary)
 *   row_marks.js          what each row has, at a glance
 *   summary.js            the line above Submit: how far the tree is done
 *   pending.js            under it, the branch points still to compare
 *   panel.js              the open message, its widgets and comparisons
 *   message_body.js       a message's body: its rendered Markdown, its source
 *   comparisons.js        branch comparison: pairs or a ranking
 *   path.js               path selection: the bars and the commands
 *   item_schemes.js       the questions about the whole conversation
 *   autosave.js           drafts, submit, skip, refusals and stale versions;
 *                         saving on leaving
 *   editing.js            submitted work opens read-only, behind Edit
 *   undo.js               undoing a cleared path, rating or deleted span
 *   training_feedback.js  a training item's expected answers
 *   suggestions.js        a judge's suggestion: before answering, or after
 *   keyboard.js           the keys and their help
 *   flash.js, elements.js the flash line; making elements
 *
 * Message text is only ever copied with textContent; its HTML, sanitised on
 * the server, goes in through message_body.js alone. No inline script, no
 * dependencies, no build step: native modules, whose imports name the files
 * as they are (production static storage rewrites them to the hashed names,
 * see config/static_storage.py). No globals beyond the widget files' contract.
 */

import { createAnswers } from "./annotate/answers.js";
import { createAutosave } from "./annotate/autosave.js";
import { createComparisons } from "./annotate/comparisons.js";
import { createEditing } from "./annotate/editing.js";
import { createFlash } from "./annotate/flash.js";
import { createFocusView } from "./annotate/focus_view.js";
import { buildItemSchemes } from "./annotate/item_schemes.js";
import { listenForKeys } from "./annotate/keyboard.js";
import { createLongMessages } from "./annotate/long_messages.js";
import { createPanel } from "./annotate/panel.js";
import { createPath } from "./annotate/path.js";
import { createPending } from "./annotate/pending.js";
import { createRowMarks } from "./annotate/row_marks.js";
import { createSuggestions } from "./annotate/suggestions.js";
import { createSummary } from "./annotate/summary.js";
import { createTrainingFeedback } from "./annotate/training_feedback.js";
import { createTreeView } from "./annotate/tree_view.js";
import { createUndo } from "./annotate/undo.js";
import { registerWidgetFiles } from "./annotate/widget_toolkit.js";
import { createWidgets } from "./annotate/widgets.js";

var root = document.querySelector("[data-annotate]");
var dataElement = document.getElementById("annotate-data");
if (root && dataElement) {
  var pageData = JSON.parse(dataElement.textContent);
  // The hand-out (a POST to the project's page) answers with this page: show the item's own
  // address, so that a reload or a bookmark asks for this item, with a GET.
  if (pageData.urls.page && window.location.pathname !== pageData.urls.page) {
    window.history.replaceState(window.history.state, "", pageData.urls.page);
  }
  start(root, pageData);
}

function start(root, data) {
  function part(name) {
    return root.querySelector("[data-" + name + "]");
  }

  // Read live by every part: false once the answers can no longer change
  // (the server says so, or a training item's feedback is showing), and
  // while submitted work is read-only, until Edit (editing.js).
  var item = { editable: Boolean(data.editable) && !data.read_only };
  var tree = createTreeView(part("tree"), data.item.tree.messages || []);
  var flash = createFlash(part("flash"));
  var undo = createUndo({ toast: part("toast"), item: item, refocus: tree.focusCurrent });
  var widgets = createWidgets(item);
  var widgetFiles = { item: item, data: data, tree: tree, flash: flash, undo: undo };
  registerWidgetFiles(widgets, widgetFiles);
  var answers = createAnswers(data, tree.childrenById, widgets.draws);
  var markRow = createRowMarks(tree, answers);
  var summary = createSummary(part("summary"), answers, tree);
  var feedback = null;
  var suggestions = null;
  var suggestionsTaken = new Set();
  var autosave = createAutosave({
    part: part,
    data: data,
    item: item,
    answers: answers,
    onFeedback: function (given) {
      feedback.show(given);
    },
    taken: suggestionsTaken,
    onSuggestions: function (given) {
      return suggestions.showAfterSubmit(given);
    },
  });
  feedback = createTrainingFeedback({ root: root, part: part, item: item, autosave: autosave });
  // Every change is saved, and counted in the summary above Submit.
  var changed = function () {
    autosave.changed();
    summary();
    pending.update();
  };
  var messages = data.item.tree.messages || [];
  var spanMode = part("tree").hasAttribute("data-span-mode");
  var comparisons = createComparisons({
    tree: tree,
    messages: messages,
    spanMode: spanMode,
    answers: answers,
    widgets: widgets,
    item: item,
    markRow: markRow,
    changed: changed,
  });
  var panel = createPanel({
    part: part,
    tree: tree,
    messages: messages,
    spanMode: spanMode,
    answers: answers,
    widgets: widgets,
    markRow: markRow,
    comparisons: comparisons,
    changed: changed,
    undo: undo,
  });
  var path = createPath({
    part: part,
    tree: tree,
    answers: answers,
    item: item,
    flash: flash,
    markRow: markRow,
    changed: changed,
    undo: undo,
  });
  var pending = createPending({
    box: part("pending-compare"),
    answers: answers,
    tree: tree,
    messages: messages,
    open: panel.openComparison,
    openId: panel.openId,
    flash: flash,
  });
  var longMessages = createLongMessages(tree);
  var pathScheme = answers.pathSchemes[0];
  var focusView = createFocusView({
    tree: tree,
    box: part("focus-view"),
    toggle: part("focus-toggle"),
    measure: longMessages.measure,
    // Below a message on the chosen path, the focus view follows the path.
    next: function (id) {
      var steps = pathScheme ? answers.get(pathScheme.name).path : [];
      var at = steps.indexOf(id);
      return at >= 0 && at + 1 < steps.length ? steps[at + 1] : null;
    },
  });
  var itemSchemes = { part: part, answers: answers, widgets: widgets, changed: changed, undo: undo };
  var editing = createEditing({
    part: part,
    item: item,
    setStatus: autosave.setStatus,
    flash: flash,
    focus: tree.focusCurrent,
    // The parts drawn from item.editable, drawn again now that it is true.
    redraw: function () {
      registerWidgetFiles(widgets, widgetFiles);
      path.buildBars();
      buildItemSchemes(itemSchemes);
      if (panel.openId() !== null) {
        panel.open(panel.openId());
      }
    },
  });
  listenForKeys({
    part: part,
    tree: tree,
    panel: panel,
    path: path,
    focusView: focusView,
    widgets: widgets,
    item: item,
    flash: flash,
    autosave: autosave,
    pending: pending,
    undo: undo,
    editing: editing,
  });
  tree.openOnClick(panel.open);
  suggestions = createSuggestions({
    root: root,
    part: part,
    item: item,
    answers: answers,
    taken: suggestionsTaken,
    autosave: autosave,
    undo: undo,
    flash: flash,
    changed: changed,
    // The answers drawn again, as they are now (a suggestion copied in, or undone).
    redraw: function () {
      path.buildBars();
      buildItemSchemes(itemSchemes);
      if (panel.openId() !== null) {
        panel.open(panel.openId());
      }
      tree.rows.forEach(function (row) {
        markRow(row.dataset.id);
      });
    },
  });
  suggestions.start(data.suggestions);

  path.buildBars();
  buildItemSchemes(itemSchemes);
  tree.rows.forEach(function (row) {
    markRow(row.dataset.id);
  });
  summary();
  pending.update();
  longMessages.measure();
  root.dataset.ready = "true";
  if (data.feedback) {
    feedback.show(data.feedback);
  } else if (tree.rows.length) {
    tree.rows[0].focus({ preventScroll: true });
  }
}
