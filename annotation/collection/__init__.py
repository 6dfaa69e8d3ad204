"""Tree collection: trees grown through tasks, as Open-Assistant's backend does — write a
prompt, review it, reply as assistant or user, review replies, rank siblings.

A Django app of its own (label ``collection``) so its tables and migrations stay apart.

- ``lifecycle`` (pure: states and moves, acceptance), ``states`` (moves under the
  tree's lock), ``scoring`` (ranked-pairs ranks of a tree), ``advance`` (the moves a
  tree's facts imply, with scoring; retries), ``ranking`` (ranked pairs, pure);
- ``availability`` (which tasks each person may get, with their counts), ``tasks``
  (hand-out, acknowledge, skip), ``submissions`` (a task's work), ``lottery`` (the
  prompt lottery), ``backlog`` (imported trees taken up for ranking), ``locks`` (the
  row locks, in one order);
- ``moderation`` (halt, delete, report), ``annotations`` (reviews and rankings as
  annotations), ``export`` (Open-Assistant's tree export);
- ``selectors``, ``views``, ``api``, ``admin``, ``errors``, ``models``.

The top group of ``annotation``: may import any other group.
"""
