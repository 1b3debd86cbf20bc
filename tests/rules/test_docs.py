from ascend_lsp.rules import RULES
from ascend_lsp.rules.docs import INDEX_START, ROOT, expected


def test_every_rule_has_a_current_doc_page_and_index_row() -> None:
    pages = expected()
    stale = [str(path) for path, text in pages.items() if not path.exists() or path.read_text(encoding="utf-8") != text]
    assert not stale, f"run `make docs`: stale {stale}"
    assert {p.stem for p in pages if p.parent.name == "rules" and p.name != "README.md"} == set(RULES)
    assert INDEX_START in (ROOT / "docs" / "rules" / "README.md").read_text(encoding="utf-8")


def test_every_rule_documents_every_section() -> None:
    for rule in RULES.values():
        for section in ("what", "why", "example", "fix", "source"):
            assert getattr(rule.doc, section).strip(), f"{rule.code} lacks '{section}'"


def test_every_rule_says_where_it_lives() -> None:
    """The location is computed: the declaring module and handlers import, the row counts are
    the tables' own, and every rule that table rows carry names its builder and existing facts."""
    import importlib
    import tomllib
    from pathlib import Path

    from ascend_lsp.rules.location import locate

    root = Path(__file__).resolve().parents[2]
    for rule in RULES.values():
        where = locate(rule)
        assert importlib.import_module(where.declared), rule.code
        for handler in (*where.handlers, *where.reported_by):
            module, _, name = handler.rpartition(".")
            assert callable(getattr(importlib.import_module(module), name)), handler
        assert where.handlers or where.reported_by, f"{rule.code}: neither a handler nor `reported_by` says where"
        for table, count in where.rows:
            data = tomllib.loads((root / table).read_text(encoding="utf-8"))
            rows = [r for s in data.values() if isinstance(s, list) for r in s if r.get("rule") == rule.code]
            assert len(rows) == count, (rule.code, table)
        if where.rows or where.table:
            assert where.builders and where.facts, f"{rule.code}: no builder or upstream facts found"
        assert all((root / fact).is_file() for fact in where.facts), rule.code
    assert locate(RULES["NPU108"]).facts == ("mappings/upstream/torch_npu/env_var_mapping.tsv",)
    assert locate(RULES["MS214"]).builders == ("mappings/build/mindspore_trap_tables.py: build_traps",)


def test_importing_the_rules_reads_no_table() -> None:
    """traps.toml is read when a trap rule's page is first asked for, not at import."""
    import subprocess
    import sys

    code = (
        "import ascend_lsp.knowledge.files as t\n"
        "seen = []\n"
        "read = t.read_table\n"
        "t.read_table = lambda path: (seen.append(path.name), read(path))[1]\n"
        "from ascend_lsp.rules import RULES\n"
        "assert seen == [], seen\n"
        "assert 'keep_prob' in RULES['MS201'].doc.what and seen == ['traps.toml'], seen\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
