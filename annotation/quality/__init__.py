"""Quality: gold items with known answers, mixed into work to measure annotators, and
the training phase that comes before real work.

- ``gold``: marking items gold with their expected answers, checked by the schemes;
  the score of an annotator's answers against them;
- ``gold_scoring``: how close answers come to the expected ones, per annotation type
  (pure);
- ``gold_imports``: expected answers read from a file of annotation records;
- ``training``: rounds of gold items with feedback, passed or failed;
- ``report`` and ``views``: the quality page (accuracy, flags, the hardest items).

The hand-out asks this group which gold item comes next (``annotation.work``), so it
sits below work. May import imports/exports, projects, the schemes and the base modules.
"""
