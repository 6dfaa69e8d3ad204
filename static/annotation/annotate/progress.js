/* How far the annotator is with the tree's schemes: what each row's status
 * marks say (row_marks.js) and the summary above Submit (summary.js) read.
 * Plain counting over the answers' state (answers.js), nothing drawn here.
 */

// The comparison of a branch point's replies: {done, answered, needed}. Pairs
// are done when every pair of replies has a label; a ranking when saved.
export function comparisonProgress(scheme, comparison) {
  var order = comparison.shown_order || [];
  if (scheme.branch_comparison.mode === "ranking") {
    var ranked = comparison.ranking && comparison.ranking.length ? 1 : 0;
    return { done: ranked === 1, answered: ranked, needed: 1 };
  }
  var needed = (order.length * (order.length - 1)) / 2;
  var seen = new Set();
  (comparison.pairs || []).forEach(function (pair) {
    if (order.indexOf(pair.a) >= 0 && order.indexOf(pair.b) >= 0 && pair.a !== pair.b) {
      seen.add(pair.a < pair.b ? pair.a + "\n" + pair.b : pair.b + "\n" + pair.a);
    }
  });
  return { done: seen.size >= needed, answered: seen.size, needed: needed };
}

// A path scheme's path: "none", "started" (it stops before a last reply) or "chosen" (it reaches one).
export function pathProgress(path, childrenById) {
  if (!path.length) {
    return "none";
  }
  var last = childrenById.get(path[path.length - 1]);
  return last && last.length ? "started" : "chosen";
}

// The summary's parts, one per thing the tree's schemes ask for:
// "5/7 messages rated", "1/2 comparisons done", "path chosen". With more
// than one scheme asking the same, each part names its scheme.
export function summaryParts(answers, tree) {
  var schemes = answers.treeSchemes;
  var messages = tree.rows.length;
  function named(scheme, count, text) {
    return count > 1 ? scheme.name + ": " + text : text;
  }
  var raters = schemes.filter(function (scheme) {
    return scheme.rates_nodes;
  });
  var parts = [];
  raters.forEach(function (scheme) {
    var rated = 0;
    answers.get(scheme.name).nodes.forEach(function (payload, id) {
      rated += tree.has(id) ? 1 : 0;
    });
    parts.push(named(scheme, raters.length, rated + "/" + messages + " messages rated"));
  });
  answers.compareSchemes.forEach(function (scheme) {
    var done = 0;
    var points = 0;
    answers.get(scheme.name).comparisons.forEach(function (comparison, parent) {
      if (tree.has(parent)) {
        points += 1;
        done += comparisonProgress(scheme, comparison).done ? 1 : 0;
      }
    });
    if (points) {
      parts.push(named(scheme, answers.compareSchemes.length, done + "/" + points + " comparisons done"));
    }
  });
  answers.pathSchemes.forEach(function (scheme) {
    var state = pathProgress(answers.get(scheme.name).path, tree.childrenById);
    var text = { none: "no path yet", started: "path started", chosen: "path chosen" }[state];
    parts.push(named(scheme, answers.pathSchemes.length, text));
  });
  return parts;
}

// The branch points whose replies some comparing scheme still waits for, in
// tree order: [{id, replies}]. Read by the summary's list of them (pending.js).
export function pendingBranchPoints(answers, tree) {
  var pending = new Set();
  answers.compareSchemes.forEach(function (scheme) {
    answers.get(scheme.name).comparisons.forEach(function (comparison, parent) {
      if (tree.has(parent) && !comparisonProgress(scheme, comparison).done) {
        pending.add(parent);
      }
    });
  });
  return Array.from(pending).sort(function (a, b) {
    return tree.indexOf(a) - tree.indexOf(b);
  }).map(function (id) {
    return { id: id, replies: tree.childrenById.get(id).length };
  });
}
