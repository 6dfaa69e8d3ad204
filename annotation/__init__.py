"""The judgement: projects over datasets of trees, and what people and imports answer in them.

Grouped by concern, one subpackage each, in layers: a module imports from its own
group and the groups below it, never from one above (``tests/test_layout.py`` holds
the order and checks it). Bottom first:

- this package's own modules: ``models``, ``problems`` (errors as values with a
  place), ``permissions`` (every permission check), ``recent`` (what a process
  keeps a moment), ``converters`` (URL converters);
- ``schemes``: the annotation types, registered by name;
- ``projects``: projects, their members, their YAML configuration (with the
  ``quality:`` and ``workflow:`` sections), their items and the counts kept of them;
- ``imports`` and ``exports``: annotations in and out of a project;
- ``quality``: gold items, their scoring and import, training, the quality page;
- ``work``: handing out items, saving answers, the annotator's pages;
- ``review``: accepting or sending back submitted work;
- ``api``: the REST API of all of the above (and of datasets and trees);
- ``collection``: tree collection, Open-Assistant's workflow (a Django app of its own);
- the wiring on top: ``admin``, ``urls``, ``receivers``, ``apps``, ``management``.
"""
