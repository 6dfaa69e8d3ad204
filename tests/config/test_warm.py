"""Warming the application before gunicorn forks (config/warm.py, platform/gunicorn.conf.py).

It loads what a first request would — every module of the apps, the URL tables, every
template — and touches no database: a connection opened in the master would be shared by
every forked worker (this test has no database access, so any query fails it).
"""

from __future__ import annotations

import sys

from config.warm import application_warm


def test_warming_loads_the_apps_urls_and_templates_without_a_database():
    warmed = application_warm()

    assert warmed["modules"] > 100
    assert warmed["templates"] > 50
    assert "annotation.work.views" in sys.modules
    assert "annotation.collection.views" in sys.modules
