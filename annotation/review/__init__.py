"""Review: a reviewer accepts an annotator's submitted item or sends it back with a comment.

- ``services``: the decision, at the version the reviewer saw;
- ``selectors``: the queue of submitted work, and one item's answers side by side;
- ``views``: the reviewer's pages.

May import work (its version check), quality, imports/exports, projects, the schemes
and the base modules.
"""
