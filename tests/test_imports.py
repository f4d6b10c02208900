"""Import boundaries (docs/design.md): importing the app never imports torch; the trainer stays
importable without the app's optional UI packages; imports run one way, app <- trainer <- bench,
with no circle."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("subctx", "subctx_train", "bench")  # each may import only those before it


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: module-level and deferred (inside functions),
    not those under `if TYPE_CHECKING:` (annotations only, never executed)."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            found += _imports(ast.Module(body=node.orelse, type_ignores=[]))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        found += _imports(node)
    return found


def _module_graph() -> dict[str, set[str]]:
    """Every project module's imports of project modules, module-level and deferred alike."""
    files = {}
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            files[name.removesuffix(".__init__")] = path

    def owner(name: str) -> str | None:  # the module a dotted import name lives in
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: list[str] = []
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets += [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parent + ([base] if base else []))
                targets += [base] + [f"{base}.{alias.name}" for alias in node.names]
        graph[name] = {t for t in map(owner, targets) if t and t != name}
    return graph


def test_imports_run_one_way_app_trainer_bench():
    graph = _module_graph()
    wrong = sorted(f"{module} imports {target}" for module, targets in graph.items()
                   for target in targets
                   if LAYERS.index(target.split(".")[0]) > LAYERS.index(module.split(".")[0]))
    assert not wrong, wrong


def test_no_import_circle():
    graph = _module_graph()
    seen: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> list[str] | None:
        seen[module] = 1
        for target in sorted(graph[module]):
            if seen.get(target) == 1:
                return path[path.index(target):] + [target] if target in path else [target]
            if target not in seen and (circle := visit(target, [*path, target])):
                return circle
        seen[module] = 2
        return None

    for module in sorted(graph):
        if module not in seen:
            circle = visit(module, [module])
            assert circle is None, " -> ".join(circle)


def test_app_does_not_import_torch():
    code = ("import sys, subctx.cli, subctx.backends, subctx.review.app, subctx.review.loader, "
            "subctx.nn, subctx.formats; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_training_does_not_need_textual():
    code = ("import sys; sys.modules['textual'] = None; "
            "import subctx_train.train, subctx_train.export, subctx_train.evaluate, "
            "subctx_train.report, subctx_train.corpora, subctx_train.cli; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_training_loop_runs_without_ctranslate2():
    """The GPU machine has torch but not ctranslate2: the trainer must not need it."""
    code = ("import sys; sys.modules['ctranslate2'] = None; sys.modules['textual'] = None; "
            "import subctx_train.train, subctx_train.cli, subctx_train.corpora; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_training_cli_as_a_module_knows_every_command_without_ctranslate2():
    """`python -m subctx_train.cli export` used to fail: main() ran before the later commands were
    registered. On the GPU machine (no ctranslate2) the recipe runs train and collect."""
    code = ("import sys, runpy; sys.modules['ctranslate2'] = None; "
            "sys.argv = ['subctx_train.cli', '--help']; runpy.run_module('subctx_train.cli', "
            "run_name='__main__')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    for command in ("train", "collect", "export", "back-translate", "self-translate",
                    "tokenizer", "dev-report"):
        assert command in out.stdout, out.stdout + out.stderr
    code = "import sys; sys.modules['ctranslate2'] = None; import subctx_train.bundle_card"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_backends_share_one_contract_without_importing_each_other():
    """The backends share subctx.backends.base, not each other; the decoder needs neither
    CTranslate2 nor torch."""
    code = ("import sys; import subctx.backends.pytorch, subctx.decoding, subctx.review.session; "
            "print('subctx.backends.ct2' in sys.modules, 'ctranslate2' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"], out.stderr
