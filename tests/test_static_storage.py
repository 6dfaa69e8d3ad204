"""Production static files: the annotate page's modules import each other by hashed name.

collectstatic runs as production runs it (DEBUG off, the storage config/settings.py
picks then) into a temporary folder. From the entry module, every import is
followed through the collected files: each names, relative to the importing
file, the hashed file the manifest holds for that module, and the file is there.
So a browser that loads the hashed entry loads every part at its hashed name,
cached for good and never mixed with another version's parts.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENTRY = "annotation/annotate.js"
PARTS = ROOT / "static" / "annotation" / "annotate"
# The URL of each `import ... from "url";`, `export ... from "url";` and `import "url";`.
IMPORT = re.compile(
    r"""^\s*(?:(?:import|export)\b[^;"']*?\bfrom|import)\s*["']([^"']+)["']\s*;""", re.MULTILINE
)


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The static root production's collectstatic fills, and its manifest (source name -> hashed name)."""
    static_root = tmp_path_factory.mktemp("static")
    env = {
        **os.environ,
        "SECRET_KEY": "collectstatic-only",
        "STATIC_MANIFEST": "1",
        "STATIC_ROOT": str(static_root),
        "BRANCHPOINT_VAR_DIR": str(tmp_path_factory.mktemp("var")),
    }
    env.pop("DEBUG", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    manifest = json.loads((static_root / "staticfiles.json").read_text())["paths"]
    return {"root": static_root, "manifest": manifest}


def test_production_collects_the_annotate_page_under_hashed_names(collected: dict[str, Any]) -> None:
    stored = collected["manifest"][ENTRY]

    assert re.fullmatch(r"annotation/annotate\.[0-9a-f]{12}\.js", stored)
    assert (collected["root"] / stored).is_file()


def test_every_module_the_annotate_page_imports_is_named_by_its_hashed_file(
    collected: dict[str, Any],
) -> None:
    root, manifest = collected["root"], collected["manifest"]
    source_of = {hashed: source for source, hashed in manifest.items()}
    reached, to_read = set(), [ENTRY]
    while to_read:
        source = to_read.pop()
        if source in reached:
            continue
        reached.add(source)
        stored = manifest[source]
        for url in IMPORT.findall((root / stored).read_text()):
            assert url.startswith(("./", "../")), f"{stored} imports {url!r}: not a relative URL"
            target = posixpath.normpath(posixpath.join(posixpath.dirname(stored), url))
            assert target in source_of, f"{stored} imports {url!r}, which is not a hashed file"
            assert (root / target).is_file(), f"{stored} imports {url!r}, which was not collected"
            to_read.append(source_of[target])

    # The walk went through every part (so none is loaded under its plain name).
    parts = {f"annotation/annotate/{path.name}" for path in PARTS.glob("*.js")}
    assert parts, "no modules under static/annotation/annotate/"
    assert reached == {ENTRY, *parts}
