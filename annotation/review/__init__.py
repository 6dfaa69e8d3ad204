"""Review: a reviewer accepts an annotator's submitted item or sends it back with a comment.

- ``services``: the decision, at the version the reviewer saw;
- ``selectors``: the queue of submitted work, and one item's answers side by side;
- ``views``: the reviewer's pages;
- ``gold_marking``: an annotator's answer made the item's gold answer (managers, from the
  item's page), and ``gold_undo``: the undo of that change, kept in the manager's session.

May import work (its version check), quality, imports/exports, projects, the schemes
and the base modules.
"""
