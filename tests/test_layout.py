"""The code's layout holds its architecture, checked so that it stays so.

- Apps depend one way: ``trees`` ← ``annotation`` ← ``evaluation``.
- ``annotation`` is grouped by concern, in layers: a module imports from its own
  group and the groups below it, never from one above (``LAYERS``, bottom first).
  Inside ``annotation`` no modules import each other in a cycle, even through
  imports inside functions.
- No module is over 600 lines (migrations aside); ``annotation``'s top level holds
  at most 10 modules besides its subpackages.
- The agreement measures are pure: importable without Django set up.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = ("trees", "annotation", "evaluation", "config")

# annotation's groups, bottom first: each may import from the groups on its own line and above.
LAYERS = [
    {
        "annotation",
        "annotation.models",
        "annotation.problems",
        "annotation.bounded_yaml",
        "annotation.recent",
        "annotation.permissions",
        "annotation.converters",
    },
    {"annotation.schemes"},
    {"annotation.projects"},
    {"annotation.imports", "annotation.exports"},
    {"annotation.quality"},
    {"annotation.work"},
    {"annotation.review"},
    {"annotation.webhooks"},
    {"annotation.api"},
    {"annotation.collection"},
    # The wiring: admin, URLs, signal receivers, the app, the commands.
    {
        "annotation.admin",
        "annotation.urls",
        "annotation.receivers",
        "annotation.apps",
        "annotation.management",
        "annotation.migrations",
    },
]
APP_ORDER = {"trees": 0, "annotation": 1, "evaluation": 2}


def _modules() -> dict[str, Path]:
    found = {}
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The modules of ours that ``name`` imports, anywhere in it (functions included)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            candidates = [base] + [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in MODULES:
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                imported.add(candidate)
    return imported


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(module: str) -> int:
    best = None
    for index, layer in enumerate(LAYERS):
        for group in layer:
            if (module == group or module.startswith(group + ".")) and (
                best is None or len(group) > len(best[1])
            ):
                best = (index, group)
    assert best is not None, f"{module} belongs to no layer of annotation: add it to LAYERS"
    return best[0]


def test_apps_depend_one_way():
    upward = [
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        for target in targets
        if module.split(".")[0] in APP_ORDER
        and target.split(".")[0] in APP_ORDER
        and APP_ORDER[target.split(".")[0]] > APP_ORDER[module.split(".")[0]]
    ]
    assert upward == []


def test_annotation_groups_import_only_their_own_and_lower_groups():
    upward = [
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if module.startswith("annotation")
        for target in targets
        if target.startswith("annotation") and _layer(target) > _layer(module)
    ]
    assert upward == []


def test_no_import_cycle_inside_annotation():
    graph = {
        module: {t for t in targets if t.startswith("annotation")}
        for module, targets in GRAPH.items()
        if module.startswith("annotation")
    }
    cycles = _cycles(graph)
    assert cycles == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_is_over_600_lines():
    long = {
        name: lines
        for name, path in MODULES.items()
        if ".migrations." not in name and (lines := len(path.read_text().splitlines())) > 600
    }
    assert long == {}


def test_annotation_top_level_holds_at_most_ten_modules():
    top = sorted(path.name for path in (ROOT / "annotation").glob("*.py"))
    assert len(top) <= 10, top


@pytest.mark.parametrize(
    "group", sorted({g for layer in LAYERS for g in layer if (ROOT / g.replace(".", "/")).is_dir()})
)
def test_each_group_says_what_it_holds(group: str):
    init = ROOT / group.replace(".", "/") / "__init__.py"
    if group.endswith(("migrations", "management")):
        return
    assert ast.get_docstring(ast.parse(init.read_text())), f"{init} needs a docstring: what the group holds"


def test_agreement_measures_import_without_django():
    code = (
        "import sys, evaluation.agreement as a; "
        "assert 'django.db.models' not in sys.modules, 'the measures pulled in the ORM'; "
        "print(a.krippendorff_alpha)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env={"PATH": ""}
    )
    assert result.returncode == 0, result.stderr
