"""Environment defaults for the test run, loaded as a pytest plugin (``-p``).

Plugins given with ``-p`` are imported before pytest-django reads the
settings, which is the only moment these can still take effect.
"""

import os

# The tests never read a developer's var/local.env (config/settings.py): what they run
# with is this file's, whatever the checkout holds.
os.environ["BRANCHPOINT_LOCAL_ENV"] = ""
os.environ.setdefault("SECRET_KEY", "tests-only-not-a-secret")
os.environ.setdefault("STATIC_MANIFEST", "0")
os.environ.setdefault("LOG_LEVEL", "WARNING")
# The test client and the live server speak plain http; production redirects it to https.
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
# Playwright's synchronous API runs an event loop in the test thread; the ORM
# calls the tests make around it are still synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
