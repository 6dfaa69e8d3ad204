/* The shape of the conversation, worked out once from the messages the
 * server sends (in preorder, each naming its parent), in one pass each:
 * who replies to whom, where the conversation branches, and how deep each
 * row is drawn. No DOM here: plain data for tree_view.js.
 *
 * Rows are indented only where the conversation branches: a reply that is
 * its parent's only reply stays at its parent's level (a chain of turns is
 * one column), and the replies of a message with two or more replies (a
 * branch point) go one level in. So a 60-turn chain with a branch at the
 * end is two levels deep, not sixty.
 *
 * In a tree that branches, a long run of single replies (a "stretch") is
 * drawn with its middle collapsed behind a button ("54 more turns"): the
 * first HEAD turns and the last TAIL stay, so the reader sees where the
 * stretch starts and what leads into the branch point it ends at.
 */

export var HEAD = 2;
export var TAIL = 3;
// A stretch collapses when at least this many turns would be hidden.
export var MIN_HIDDEN = 4;

// The shape of `messages` ({id, parent, depth} in preorder):
//   childrenById  Map(id -> reply ids, in order)
//   rootIds       the messages that reply to nothing on the page
//   siblingIndex  Map(id -> place among its parent's replies, from 0)
//   branching     whether any message has two or more replies (or there are two roots)
//   levels        per row, the drawn level from 1: one more than the parent's at a branch point
//   setSizes, positions   per row, its group of rows at its level and its place in it (from 1)
//   continues     per row, whether it is its parent's only reply and follows it directly
//   gaps          the collapsed middles of long stretches: {after, from, to} row indexes
//                 (`after` is the last row shown before it; from..to inclusive are hidden)
export function treeShape(messages) {
  var childrenById = new Map();
  var indexById = new Map();
  messages.forEach(function (message, index) {
    childrenById.set(message.id, []);
    indexById.set(message.id, index);
  });
  var rootIds = [];
  var siblingIndex = new Map();
  messages.forEach(function (message) {
    var siblings = message.parent !== null && childrenById.has(message.parent) ? childrenById.get(message.parent) : rootIds;
    siblingIndex.set(message.id, siblings.length);
    siblings.push(message.id);
  });
  var branching = rootIds.length > 1;
  childrenById.forEach(function (children) {
    if (children.length >= 2) {
      branching = true;
    }
  });

  var levels = [];
  var continues = [];
  messages.forEach(function (message, index) {
    var parentIndex = message.parent !== null && indexById.has(message.parent) ? indexById.get(message.parent) : -1;
    if (parentIndex < 0) {
      levels.push(1);
      continues.push(false);
      return;
    }
    var replies = childrenById.get(message.parent).length;
    levels.push(levels[parentIndex] + (replies >= 2 ? 1 : 0));
    continues.push(replies === 1 && parentIndex === index - 1);
  });

  return {
    childrenById: childrenById,
    rootIds: rootIds,
    siblingIndex: siblingIndex,
    branching: branching,
    levels: levels,
    groups: levelGroups(levels),
    continues: continues,
    // A dialogue that never branches is read whole, as the list of turns it is.
    gaps: branching ? stretchGaps(continues) : [],
  };
}

// Each row's group (the rows at its level between two shallower rows, as a
// screen reader counts a flat tree) as {setSizes, positions}, in one pass
// with a stack of the open groups.
function levelGroups(levels) {
  var setSizes = new Array(levels.length);
  var positions = new Array(levels.length);
  var open = [];
  var members = [];
  function close(group) {
    group.forEach(function (index) {
      setSizes[index] = group.length;
    });
  }
  levels.forEach(function (level, index) {
    while (open.length && open[open.length - 1] > level) {
      open.pop();
      close(members.pop());
    }
    if (!open.length || open[open.length - 1] < level) {
      open.push(level);
      members.push([]);
    }
    var group = members[members.length - 1];
    group.push(index);
    positions[index] = group.length;
  });
  members.forEach(close);
  return { setSizes: setSizes, positions: positions };
}

// The collapsed middles of the stretches (runs of rows each continuing the
// one before) long enough to collapse.
function stretchGaps(continues) {
  var gaps = [];
  var start = 0;
  for (var index = 1; index <= continues.length; index += 1) {
    if (index === continues.length || !continues[index]) {
      var end = index - 1;
      var hidden = end - start + 1 - HEAD - TAIL;
      if (hidden >= MIN_HIDDEN) {
        gaps.push({ after: start + HEAD - 1, from: start + HEAD, to: end - TAIL });
      }
      start = index;
    }
  }
  return gaps;
}
