/* The annotator's answers on the annotate page, and the payload they make.
 *
 * One state object keyed by scheme name and, inside a tree scheme, by node
 * external id, never by the open node or a position: rating one node cannot
 * touch another's rating, and opening a node only reads state. A tree
 * scheme's state is {nodes: Map(id -> payload), path: [ids],
 * comparisons: Map(parent id -> {shown_order, pairs | ranking})}; an
 * item-level scheme's is its payload as the API takes it (none when unset).
 */

// A plain object's [key, value] pairs; none for anything else (a payload
// that is missing or malformed reads as empty).
export function entries(object) {
  return object && typeof object === "object" && !Array.isArray(object) ? Object.entries(object) : [];
}

// The answers saved in `data` (the page data), over the tree whose
// children by parent id are `childrenById`. `draws(type)` says whether the
// page has a widget for an item-level annotation type: schemes of other
// types are left out (and their saved answers kept out of the payload).
export function createAnswers(data, childrenById, draws) {
  var schemes = data.schemes || [];
  var treeSchemes = schemes.filter(function (scheme) {
    return scheme.annotation_type === "tree_annotation";
  });
  var itemSchemes = schemes.filter(function (scheme) {
    return draws(scheme.annotation_type);
  });
  var pathSchemes = treeSchemes.filter(function (scheme) {
    return scheme.path_selection && scheme.path_selection.enabled;
  });
  var compareSchemes = treeSchemes.filter(function (scheme) {
    return scheme.branch_comparison && scheme.branch_comparison.enabled;
  });
  var saved = data.item.annotations || {};
  var answers = new Map();

  // A tree scheme's state from its payload; `shownOrders` (a comparisons Map), when given,
  // keeps the orders this annotator was shown over those the payload brings (a suggestion's).
  function treeState(scheme, payload, shownOrders) {
    var state = {
      nodes: new Map(entries(payload.node_annotations)),
      path: Array.isArray(payload.selected_path) ? payload.selected_path.slice() : [],
      comparisons: new Map(entries(payload.branch_comparisons)),
    };
    if (scheme.branch_comparison && scheme.branch_comparison.enabled) {
      var answerKey = scheme.branch_comparison.mode === "ranking" ? "ranking" : "pairs";
      childrenById.forEach(function (children, parent) {
        // The server stored a shuffled order when it handed the item out; tree
        // order is only a fallback for a comparison added to the config since.
        if (children.length >= 2 && !state.comparisons.has(parent)) {
          var fresh = { shown_order: children.slice() };
          fresh[answerKey] = [];
          state.comparisons.set(parent, fresh);
        }
      });
    }
    if (shownOrders) {
      state.comparisons.forEach(function (comparison, parent) {
        var shown = shownOrders.get(parent);
        if (shown && shown.shown_order) {
          comparison.shown_order = shown.shown_order.slice();
        }
      });
    }
    return state;
  }

  treeSchemes.forEach(function (scheme) {
    answers.set(scheme.name, treeState(scheme, saved[scheme.name] || {}));
  });

  // Replace a scheme's answer with `payload` as the API takes it (a suggestion taken, or an
  // answer put back): none (undefined) takes an item-level answer away.
  function load(name, payload) {
    var tree = treeSchemes.find(function (scheme) {
      return scheme.name === name;
    });
    if (tree) {
      answers.set(name, treeState(tree, JSON.parse(JSON.stringify(payload || {})), answers.get(name).comparisons));
    } else if (payload === undefined || payload === null) {
      answers.delete(name);
    } else {
      answers.set(name, JSON.parse(JSON.stringify(payload)));
    }
  }
  itemSchemes.forEach(function (scheme) {
    if (saved[scheme.name] !== undefined) {
      answers.set(scheme.name, saved[scheme.name]);
    }
  });

  function collect() {
    var result = {};
    treeSchemes.forEach(function (scheme) {
      var state = answers.get(scheme.name);
      var payload = {};
      if (scheme.rates_nodes) {
        payload.node_annotations = Object.fromEntries(state.nodes);
      }
      if (scheme.path_selection && scheme.path_selection.enabled) {
        payload.selected_path = state.path.slice();
      }
      if (scheme.branch_comparison && scheme.branch_comparison.enabled) {
        payload.branch_comparisons = Object.fromEntries(state.comparisons);
      }
      result[scheme.name] = payload;
    });
    itemSchemes.forEach(function (scheme) {
      if (answers.has(scheme.name)) {
        result[scheme.name] = answers.get(scheme.name);
      }
    });
    return result;
  }

  return {
    treeSchemes: treeSchemes,
    itemSchemes: itemSchemes,
    pathSchemes: pathSchemes,
    compareSchemes: compareSchemes,
    get: function (name) {
      return answers.get(name);
    },
    has: function (name) {
      return answers.has(name);
    },
    set: function (name, payload) {
      answers.set(name, payload);
    },
    delete: function (name) {
      answers.delete(name);
    },
    collect: collect,
    load: load,
  };
}
