"""Long work off the request: jobs (a Django app of its own, label ``jobs``).

A ``Job`` is what a person asked for and can watch: its state, progress, problems
and result. The queue underneath is django-tasks (``django.tasks`` from Django 6.0):
each task function lives with its domain (``trees.tasks``, ``annotation.imports.tasks``)
and takes a job's id; ``services.job_execute`` runs its work with the claim, the
heartbeat, the cancel check and the all-or-nothing finish. ``jobs_worker`` runs the
backend's worker beside the reaper, which requeues or fails jobs whose worker died.

Imports nothing from ``annotation`` or ``evaluation``: who may see a job beyond its
creator and staff is the API's to decide (``annotation.api.jobs``).
"""
