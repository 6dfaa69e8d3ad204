"""Annotations read into a project: the potato-format records ``export_annotations`` writes
(``annotations``), through the record reader the gold import shares (``records``).

May import the projects group, the schemes and the base modules (models, problems,
permissions), and ``trees``; nothing above (quality, work, review, api, collection).
"""
