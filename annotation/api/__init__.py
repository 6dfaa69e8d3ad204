"""The JSON API under ``/api/v1/``: thin DRF views over the annotation services.

One module per resource — ``datasets``, ``trees``, ``projects`` (and members),
``items`` (the annotator's loop), ``annotations`` (read, export, import), ``me`` —
and the pieces every view shares: ``authentication`` and ``tokens`` (Bearer tokens),
``errors`` (one JSON error shape), ``parsers`` (body limits), ``files`` (uploads and
streamed downloads), ``pagination``, ``throttling``, ``schema`` (OpenAPI).

Datasets and trees are served from here rather than from ``trees``: who may read or
import them depends on projects (a dataset is visible through the projects over it),
and ``trees`` imports nothing from ``annotation``. The collection workflow's and
evaluation's endpoints live in their own apps (``annotation.collection.api``,
``evaluation.api``) and use the shared pieces here.

May import every annotation group below it (collection aside) and the base modules.
"""
