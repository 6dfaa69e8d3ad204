"""Everything a first request would load, loaded once in gunicorn's master before it forks.

With ``preload_app`` the master imports only the WSGI module; each worker then imported the
views, compiled the templates and built the URL resolver's tables on its first requests, so
a fresh worker (and every worker again after ``max_requests``) answered its first request in
0.3 to 0.6 s. Warmed here, the workers are forked with all of it in memory they share
copy-on-write. Nothing here opens a database connection: one made before the fork would be
shared by every worker (``bench/page_cycle.py`` measures a fresh worker's first request).
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from django.conf import settings
from django.template import engines
from django.template.exceptions import TemplateDoesNotExist, TemplateSyntaxError
from django.urls import get_resolver

# Branchpoint's apps (Django's and third parties' modules load with their apps; ``config``'s
# with the URLs, and its test-run module must never load in production).
PACKAGES = ("trees", "annotation", "evaluation")
# Not needed to serve a request: the commands, the migrations.
SKIPPED = ("migrations", "management")


def application_warm() -> dict[str, int]:
    """Import every module of our apps, build the URL resolver's tables and compile every
    template; returns how many of each (for the log)."""
    modules = _modules_import()
    resolver = get_resolver()
    # Reading the reverse table builds those of every URLconf the root one includes.
    names = len(resolver.reverse_dict)
    for status in (400, 403, 404, 500):
        resolver.resolve_error_handler(status)
    return {"modules": modules, "root url names": names, "templates": _templates_compile()}


def _modules_import() -> int:
    count = 0
    for package in PACKAGES:
        path = Path(settings.BASE_DIR) / package
        for module in pkgutil.walk_packages([str(path)], prefix=f"{package}."):
            if any(part in SKIPPED for part in module.name.split(".")):
                continue
            importlib.import_module(module.name)
            count += 1
    return count


def _templates_compile() -> int:
    """Compile each template file of the project's and the apps' template folders; the
    template engine's cached loader keeps them (it is on when DEBUG is off)."""
    count = 0
    for engine in engines.all():
        for folder in engine.template_dirs:
            for path in Path(folder).rglob("*.html"):
                try:
                    engine.get_template(path.relative_to(folder).as_posix())
                except (TemplateDoesNotExist, TemplateSyntaxError):
                    continue  # a fragment extended with context-dependent names: loaded when used
                count += 1
    return count
