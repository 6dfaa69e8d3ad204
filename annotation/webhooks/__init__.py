"""Webhooks: integrations subscribe per project to events, and are sent each one, signed.

A Django app of its own (label ``webhooks``), so that its tables and migrations stay
apart. It sits above ``review`` and below ``api`` in ``annotation``'s layers: it hears
the signals of the groups below it (``work.signals.item_submitted``, a saved ``Review``,
``review.signals.item_finalised``); what sits above it (collection's ``tree_finished``,
evaluation's runs) reaches it from the wiring (``annotation.receivers``) or by calling
``events.event_emit``.

- ``models``: ``Webhook`` (a project's subscription) and ``Delivery`` (one event for one
  webhook, with its status, attempts and last error).
- ``events``: the events, and recording their deliveries once the request's transaction
  commits — never failing the request.
- ``signing``: the signature header (pure).
- ``sending``: sending due deliveries over HTTP, with retries and backoff; what
  ``manage.py send_webhooks`` runs.
- ``services``: creating, changing and deleting webhooks, replaying deliveries (audited).
- ``admin``: webhooks and their deliveries, with a replay action.
"""
