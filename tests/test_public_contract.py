"""The engineer's loop and the public contract hold together (issue 21, item 5 and the reference of
item 4): one source for the version; the contract page's generated tables come from the code; the API
reference names every public name, each with a docstring; the docs extra is pinned and installed by
`make docs`; the `slow` marker is registered and `make test-fast` leaves it out."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import importlib.util
import inspect
import re
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

import judge
from judge.cli import app

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
REFERENCE = REPO / "docs" / "reference"
CONTRACT = REPO / "docs" / "contract.md"


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- one source for the version


def test_the_version_has_one_source():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"], "pyproject.toml must not repeat the version"
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "judge.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", judge.__version__)
    installed = importlib.metadata.version(judge.DISTRIBUTION)  # judge-drift: `judge` on the index is another project
    assert installed == judge.__version__, (
        f"the installed metadata says {installed}, judge/__init__.py {judge.__version__}: run `make install`")
    result = CliRunner().invoke(app, ["--version"])
    assert result.output == f"judge {judge.__version__}\n"


def test_a_version_bump_reinstalls_so_the_metadata_follows():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    stamp = re.search(r"^\$\(STAMP\):(.*)$", makefile, re.M)
    assert stamp and "judge/__init__.py" in stamp.group(1).split()


# ---------------------------------------------------------------- the contract page


def test_the_contract_page_lists_every_command_and_option_of_the_app():
    surface = _script("surface")
    rows = {c.path: c for c in surface.commands()}
    assert {"judge", "judge grade", "judge suite", "judge prompts lock", "judge import otel"} <= set(rows)
    grade = rows["judge grade"]
    assert grade.arguments == ["SCENARIO", "[TRACE...]"]  # with --policy, every file is a trace
    assert {"--judge NAME", "--floor NUMBER", "-q, --quiet", "--json PATH", "-h, --help"} <= set(grade.options)
    assert "-V, --version" in rows["judge"].options
    page = CONTRACT.read_text(encoding="utf-8")
    for path, command in rows.items():  # the committed table is the app's (docs_outputs --check: the whole table)
        assert f"| `{' '.join([path, *command.arguments])}` |" in page, f"{path} is missing from docs/contract.md"


def test_the_contract_page_has_every_generated_table():
    page = CONTRACT.read_text(encoding="utf-8")
    surface = _script("surface")
    for name in surface.TABLES:
        assert f"<!-- judge-generated: {name} -->" in page
    assert page.count("<!-- /judge-generated -->") == len(surface.TABLES)


def test_the_objects_table_marks_required_and_optional_fields():
    table = "\n".join(_script("surface").objects_table())
    assert "| `Session` | `id`, `first_turn` |" in table
    assert "| `LedgerEntry` | `key`, `class`, `value?`, `source_turn`," in table  # the alias, as files spell it
    assert "`GradeReport`" in table and "`RunReport`" in table and "`SuiteReport`" in table


def test_the_contract_page_exit_codes_are_the_code_s():
    from judge.grade import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_INPUT, EXIT_INTERNAL, EXIT_PASS

    page = CONTRACT.read_text(encoding="utf-8")
    section = page.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    codes = [int(m) for m in re.findall(r"^\| (\d) \|", section, re.M)]
    assert codes == [EXIT_PASS, EXIT_FAIL, EXIT_INPUT, EXIT_INCONCLUSIVE, EXIT_INTERNAL] == [0, 1, 2, 3, 4]


def test_a_generated_block_is_found_between_its_markers():
    docs_outputs = _script("docs_outputs")
    lines = ["# Page", "<!-- judge-generated: cli -->", "| a |", "|---|", "<!-- /judge-generated -->", "after",
             "<!-- judge-generated: http -->"]
    found, missing = docs_outputs.find_blocks(CONTRACT, lines)
    assert (found.kind, found.spec, found.body) == ("generated", "cli", (2, 4))
    assert (missing.kind, missing.spec, missing.body) == ("generated", "http", None)  # --write inserts it


# ---------------------------------------------------------------- the API reference


def _directives() -> dict[str, list[str] | None]:
    """`::: module` of every reference page -> its `members:` list (None: every public member)."""
    found: dict[str, list[str] | None] = {}
    for page in sorted(REFERENCE.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"^::: (\S+)\n((?:    .*\n?)*)", text, re.M):
            members = re.search(r"^\s+members: \[(.*)\]\s*$", m.group(2), re.M)
            off = re.search(r"^\s+members: false\s*$", m.group(2), re.M)
            found[m.group(1)] = ([n.strip() for n in members.group(1).split(",")] if members
                                 else [] if off else None)
    return found


def _public_api() -> dict[str, object]:
    """Every name the contract calls public: judge.api, judge.testing, judge.model, calibration and
    the Judge protocol with its request and result (submodules left out)."""
    import calibration
    import judge.api
    import judge.model
    import judge.testing

    names: dict[str, object] = {}
    for module in (judge.api, judge.testing, judge.model, calibration):
        for name in module.__all__:
            obj = getattr(module, name)
            if not inspect.ismodule(obj):
                names[f"{module.__name__}.{name}"] = obj
    from judge.judges import base

    for name in ("Judge", "JudgeRequest", "JudgeResult", "LedgerRow"):
        names[f"judge.judges.base.{name}"] = getattr(base, name)
    return names


def _attribute_docstrings(module: str) -> set[str]:
    """Module-level names assigned with a string right below them (what griffe reads as docstrings)."""
    tree = ast.parse(Path(importlib.import_module(module).__file__).read_text(encoding="utf-8"))
    found = set()
    for node, after in zip(tree.body, tree.body[1:], strict=False):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        documented = isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) \
            and isinstance(after.value.value, str)
        found |= {t.id for t in targets if isinstance(t, ast.Name) and documented}
    return found


def _defined_in(obj: object, module: str, name: str) -> bool:
    """Whether `module` holds `obj` as `name`, as its own definition or as an export in `__all__`."""
    namespace = importlib.import_module(module)
    if getattr(namespace, name, None) is not obj:
        return False
    own = getattr(obj, "__module__", None) == module if inspect.isclass(obj) or inspect.isfunction(obj) else True
    return own or name in getattr(namespace, "__all__", ())


def _shown(exported: str, obj: object, directives: dict[str, list[str] | None]) -> bool:
    """A `::: module` directive renders it: the module defines (or exports) it, the directive does not
    leave it out, and an attribute has the docstring without which mkdocstrings would not list it."""
    name = exported.rsplit(".", 1)[1]
    for module, members in directives.items():
        if _defined_in(obj, module, name) and (members is None or name in members):
            if inspect.isclass(obj) or inspect.isfunction(obj) or name in _attribute_docstrings(module):
                return True
    return False


def test_the_api_reference_renders_every_public_name():
    directives = _directives()
    assert {"judge.api", "judge.testing", "judge.judges.base", "judge.model.report", "calibration.api"} <= set(directives)
    missing = [exported for exported, obj in _public_api().items() if not _shown(exported, obj, directives)]
    assert not missing, f"public names the API reference (docs/reference/) does not show: {missing}"


def _own_members(cls: type) -> list[tuple[str, object]]:
    return [(n, v) for n, v in vars(cls).items() if not n.startswith("_")
            and (inspect.isfunction(v) or isinstance(v, (property, classmethod, staticmethod)))]


def test_every_public_class_and_function_of_the_reference_has_a_docstring():
    undocumented = []
    for exported, obj in _public_api().items():
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        doc = vars(obj).get("__doc__") if inspect.isclass(obj) else obj.__doc__
        if not (doc or "").strip() or doc.startswith(f"{obj.__name__}("):  # a dataclass's made-up signature
            undocumented.append(exported)
        if inspect.isclass(obj):
            for name, member in _own_members(obj):
                target = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                if not (target.__doc__ or "").strip():
                    undocumented.append(f"{exported}.{name}")
    assert not undocumented, f"public names without a docstring: {undocumented}"


# ---------------------------------------------------------------- the loop: docs extra, fast subset


def test_make_docs_installs_the_docs_extra_and_constraints_pin_it():
    extra = PYPROJECT["project"]["optional-dependencies"]["docs"]
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    installed = re.search(r"^DOCS_REQUIREMENTS := (.*)$", makefile, re.M).group(1)
    assert re.findall(r"'([^']+)'", installed) == extra
    pins = dict(line.split("==") for line in (REPO / "constraints.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    for requirement in extra:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0).lower()
        assert name in {p.lower() for p in pins}, f"{name} is not pinned in constraints.txt"
    assert {"mkdocstrings-python", "griffelib"} <= set(pins), "the python handler and griffe are pinned too"


def test_the_slow_marker_is_registered_and_the_fast_subset_leaves_it_out():
    options = PYPROJECT["tool"]["pytest"]["ini_options"]
    assert any(m.startswith("slow:") for m in options["markers"]) and "--strict-markers" in options["addopts"]
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    fast = re.search(r"^test-fast:.*\n\t(.*)$", makefile, re.M).group(1)
    assert '-m "not slow"' in fast
    full = re.search(r"^test:.*\n\t(.*)$", makefile, re.M).group(1)
    assert full.split()[-2:] == ["-m", "pytest"], "make test (what CI runs) runs every test, no marker left out"
    assert "make test" in (REPO / ".ci" / "run").read_text() and "make test-fast" in (REPO / "README.md").read_text()


@pytest.mark.parametrize("document", ["CONTRIBUTING.md", "CHANGELOG.md"])
def test_the_engineer_s_documents_exist_and_name_what_they_promise(document):
    text = (REPO / document).read_text(encoding="utf-8")
    if document == "CHANGELOG.md":
        assert text.index("## Unreleased") < text.index(f"## {judge.__version__}")
    else:
        for needle in ("make test-fast", "scripts/docs_outputs.py --write", "judge.rules", "judge.backends",
                       "judge.importers", "judge/checks/"):
            assert needle in text, f"CONTRIBUTING.md does not say {needle}"
