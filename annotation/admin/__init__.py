"""The admin of the annotation app, one module per concern: projects with their members,
exports and imports (``projects``); what annotators answered, read-only (``answers``);
items and their gold answers (``items``); API tokens (``tokens``); accounts, whose
usernames may not look like another's (``users``); failed and successful logins, and
unlocking (``logins``).

Thin on purpose, like the trees admin: forms and actions call the same services as the
pages, the API and the commands. Django finds the admin through this package; the
modules register their models when imported here.
"""

from annotation.admin import answers, items, logins, projects, tokens, users  # noqa: F401
