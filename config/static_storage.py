"""Static files in production: whitenoise's hashed, compressed files, with the
imports of native JavaScript modules rewritten to the hashed names too.

The annotate page is native ES modules: ``static/annotation/annotate.js``
imports its parts from ``static/annotation/annotate/`` by relative URL. Django's
manifest storage rewrites ``import ... from "./x.js";`` to ``"./x.<hash>.js"``
only when ``support_js_module_import_aggregation`` is on (it is off by default);
without it a hashed entry module would import the unhashed files, which are
neither cached for good nor tied to the version of the entry that imports them.

A module's hash covers its rewritten imports, so changing one module renames
every module that imports it, up to the entry. Django's patterns look for
imports and exports that name a relative URL (``./``, ``../``) and end with a
semicolon, so ours are written that way. Import cycles are not allowed: their
hashes never settle and collectstatic stops with "Max post-process passes
exceeded". An import of a file that is not collected stops collectstatic too.
The patterns run over every collected ``.js`` file; the admin's and the API
docs' scripts had no such imports when this was turned on (their collected
files came out the same). ``tests/test_static_storage.py`` collects the files
as production does and follows the page's imports.
"""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class CompressedManifestModuleStorage(CompressedManifestStaticFilesStorage):
    """whitenoise's storage, also pointing JavaScript module imports at hashed names."""

    support_js_module_import_aggregation = True
