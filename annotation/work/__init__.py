"""An annotator's work: handing out items, saving their answers, and their pages.

- ``assignment``: who gets which item next, under the project's overlap, with gold
  checks and training mixed in (``annotation.quality``) — atomic, with leases;
- ``submissions``: drafts, submissions and skips, version-checked, scored against
  gold in the same transaction;
- ``selectors`` and ``item_json``: one annotator's item with their answers, and the
  JSON the API and the annotate page share;
- ``my_work``: an annotator's own items, newest activity first (My work, and the
  annotate page's Previous and Next);
- ``views``: a project's start page, My work and the annotate page.

May import quality, imports/exports, projects, the schemes and the base modules.
"""
